/**
 * The project in what channels send (issue 37 §2): the webhook's finding JSON carries it, Slack's
 * fallback text and fields name it, the email's subject names its last part and its table the
 * whole; a finding without a project says nothing of one.
 */
import { describe, expect, it } from 'vitest';
import { formatEmail, projectName } from '../../../src/notifier/email.ts';
import { buildPayload, testPayload } from '../../../src/notifier/payload.ts';
import { formatSlack } from '../../../src/notifier/slack.ts';

const config = { publicUrl: 'https://rotscope.example.com', host: '127.0.0.1', port: 4318 };
const base = testPayload('default', config, new Date('2026-01-01T00:00:00Z')).data;
const { url: _url, workspaceName: _name, ...finding } = base;
const at = (project: string | null) =>
  buildPayload({ ...finding, id: '42', project }, 'finding.created', 'default', config);

describe('the project in channel messages', () => {
  it('the webhook payload carries it', () => {
    expect(at('/srv/app/alpha-svc').data.project).toBe('/srv/app/alpha-svc');
    expect(at(null).data.project).toBeNull();
  });

  it('Slack names it in the fallback text and a field', () => {
    const message = formatSlack(at('/srv/app/<alpha>-svc'));
    expect(message.text).toMatch(/^\[warning\] Context too full in \/srv\/app\/<alpha>-svc: /);
    const fields = message.blocks.flatMap((b) => ('fields' in b && b.fields ? b.fields : []));
    expect(fields.map((f) => f.text)).toContain('*Project*\n/srv/app/&lt;alpha&gt;-svc');
    const none = formatSlack(at(null));
    expect(none.text).toMatch(/^\[warning\] Context too full: /);
    expect(JSON.stringify(none.blocks)).not.toContain('*Project*');
  });

  it('the email names its last part in the subject and all of it in the table', () => {
    const email = formatEmail(at('https://github.com/acme/alpha-svc.git'));
    expect(email.subject).toMatch(/^\[rotscope\] Warning: Context too full in alpha-svc - /);
    expect(email.text).toContain('Project: https://github.com/acme/alpha-svc.git\n');
    expect(email.html).toContain(
      '<tr><th align="left">Project</th><td>https://github.com/acme/alpha-svc.git</td></tr>',
    );
    const none = formatEmail(at(null));
    expect(none.subject).toMatch(/^\[rotscope\] Warning: Context too full - /);
    expect(none.text).not.toContain('Project:');
  });

  it.each([
    ['/srv/app/alpha-svc', 'alpha-svc'],
    ['/srv/app/alpha-svc/', 'alpha-svc'],
    ['C:\\work\\beta', 'beta'],
    ['git@github.com:acme/ledger.git', 'ledger'],
    ['https://github.com/acme/ledger.git', 'ledger'],
    ['git@host:ledger.git', 'ledger'],
    ['/', '/'],
  ])('projectName(%s) = %s', (project, name) => expect(projectName(project)).toBe(name));
});
