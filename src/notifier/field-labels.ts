/**
 * Channel configuration problems in the words of the form a person filled ("Email address 2
 * is not valid", "SMTP port must be a whole number from 1 to 65535"), not as the internal
 * paths and validator phrases they come from ("config.to.1: Invalid email address"). The API
 * answers these messages and the console shows them as they are; the machine-readable path
 * stays in the 400's `problems`. Pure: no I/O.
 */
import type { z } from 'zod';

type Key = string | number;

/** Names of the configuration keys as the console's channel form labels them. */
const LABELS: Record<string, string> = {
  url: 'Webhook URL',
  secret: 'Signing secret',
  headers: 'Headers',
  webhookUrl: 'Slack webhook URL',
  host: 'SMTP host',
  port: 'SMTP port',
  secure: 'TLS setting',
  user: 'SMTP user',
  password: 'SMTP password',
  from: 'From address',
  to: 'Recipients (To)',
  allowPrivateAddress: 'Allow private address',
};

/**
 * The label of a configuration field, from its path below `config`: `['to', 1]` is
 * "Email address 2", `['headers', 'X-Team']` is `Header "X-Team"`, an unknown key is quoted.
 */
export function fieldLabel(path: readonly Key[]): string {
  const [key, sub] = path;
  if (key === undefined) return 'Channel settings';
  if (key === 'to' && typeof sub === 'number') return `Email address ${sub + 1}`;
  if (key === 'headers' && sub !== undefined) return `Header "${String(sub)}"`;
  return LABELS[String(key)] ?? `Setting "${String(key)}"`;
}

/** What a too-small or too-big bound means for a field, in words. */
function bound(issue: { origin?: unknown; minimum?: unknown; maximum?: unknown }): string {
  const limit = Number(issue.minimum ?? issue.maximum);
  const least = issue.minimum !== undefined;
  switch (issue.origin) {
    case 'string':
      return least && limit === 1
        ? 'is required'
        : `must be at ${least ? 'least' : 'most'} ${limit} characters`;
    case 'array':
      return least && limit === 1
        ? 'needs at least one address'
        : `must have at ${least ? 'least' : 'most'} ${limit} entries`;
    case 'number':
      return `must be ${least ? 'at least' : 'at most'} ${limit}`;
    default:
      return 'is out of range';
  }
}

/** The value at a path of the input, when there is one. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** What is wrong with the field, as the end of a sentence that starts with its label. */
function predicate(issue: z.core.$ZodIssue, input: unknown, label: string): string {
  const keyOf = issue.path[0];
  if (keyOf === 'port' && issue.code !== 'invalid_type' && issue.code !== 'unrecognized_keys')
    return 'must be a whole number from 1 to 65535';
  switch (issue.code) {
    case 'invalid_type': {
      if (valueAt(input, issue.path) === undefined) return 'is required';
      if (keyOf === 'port') return 'must be a whole number from 1 to 65535';
      const expected = String(issue.expected);
      const words: Record<string, string> = {
        string: 'must be text',
        number: 'must be a number',
        int: 'must be a whole number',
        boolean: 'must be true or false',
        array: 'must be a list',
        object: 'must be an object',
        record: 'must be an object',
      };
      return words[expected] ?? `must be ${expected}`;
    }
    case 'invalid_format':
      return issue.format === 'email' ? 'is not valid' : `is not a valid ${issue.format}`;
    case 'too_small':
    case 'too_big':
      return bound(issue);
    default:
      // Our own refinements are written as predicates already ("must be an http(s) URL").
      return label.startsWith('Header "') && issue.message === 'reserved header'
        ? 'is set by rotscope itself and cannot be overridden'
        : issue.message;
  }
}

/**
 * One configuration problem as a sentence: its field's label and what is wrong ("Email
 * address 1 is not valid"; an unknown key: `"extra" is not a setting of a webhook channel`).
 * `input` is the configuration as received (to tell a missing field from a wrong one).
 */
export function describeIssue(issue: z.core.$ZodIssue, input: unknown, type: string): string {
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => `"${key}"`).join(', ');
    const verb = issue.keys.length === 1 ? 'is not a setting' : 'are not settings';
    return `${keys} ${verb} of ${type === 'email' ? 'an' : 'a'} ${type} channel`;
  }
  const label = fieldLabel(issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key)));
  return `${label} ${predicate(issue, input, label)}`;
}
