/** maskUrl: what the API shows of a webhook URL. */
import { describe, expect, it } from 'vitest';
import { maskUrl } from '../../../src/notifier/config.ts';

describe('maskUrl', () => {
  it.each([
    ['https://hooks.example.com/alerts', 'https://hooks.example.com/alerts'],
    ['https://user:pa55@hooks.example.com/a', 'https://***:***@hooks.example.com/a'],
    [
      'https://hooks.example.com/a?token=abc&team=ops',
      'https://hooks.example.com/a?token=***&team=ops',
    ],
    ['https://h.example.com/a?api_key=k1&x=1', 'https://h.example.com/a?api_key=***&x=1'],
    ['https://h.example.com/a?sig=zz&sv=2024', 'https://h.example.com/a?sig=***&sv=2024'],
    ['https://h.example.com/a?c=Ab3dEf6hIj9kLm2n', 'https://h.example.com/a?c=***'],
    ['https://h.example.com/a?page=12&sort=name', 'https://h.example.com/a?page=12&sort=name'],
    [
      'https://discord.com/api/webhooks/123456/AbCdEf0123456789ghIJklMNop',
      'https://discord.com/api/webhooks/123456/***',
    ],
    ['not a url', 'not a url'],
  ])('%s -> %s', (input, masked) => {
    expect(maskUrl(input)).toBe(masked);
  });
});
