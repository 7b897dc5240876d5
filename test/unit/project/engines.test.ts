/**
 * The Node.js versions package.json promises are the ones every installed package accepts:
 * `npm ci` on the oldest promised Node prints no EBADENGINE (cookie@2 and content-disposition@3
 * once required Node 22 while the README said 20). Read from package-lock.json, which is what
 * `npm ci` installs, dependencies and devDependencies alike (the tests and the build run on the
 * same Node).
 */
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  engines: { node: string };
};
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<
    string,
    { version?: string; engines?: { node?: string } | string[]; optional?: boolean }
  >;
};

describe('engines', () => {
  const oldest = semver.minVersion(pkg.engines.node)!.version;

  it('package.json names a Node 20 line the README can promise', () => {
    expect(semver.major(oldest)).toBe(20);
    const readme = readFileSync(new URL('README.md', root), 'utf8');
    expect(readme).toContain(`Node ${oldest.replace(/\.0$/, '')}+`);
  });

  it('every locked package accepts the oldest promised Node', () => {
    const refusing = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && !Array.isArray(p.engines) && p.engines?.node)
      .filter(([, p]) => !semver.satisfies(oldest, (p.engines as { node: string }).node))
      .map(([path, p]) => `${path}@${p.version}: node ${(p.engines as { node: string }).node}`);
    expect(refusing).toEqual([]);
  });
});
