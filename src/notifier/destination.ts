/**
 * The destination check a channel gets when it is created, changed or tested: the rule the
 * sender applies at every send (`addresses.ts`), taken early, so that a destination every
 * send would refuse is refused to the person configuring it instead of failing silently
 * later.
 */
import { fieldLabel } from './field-labels.ts';
import { resolveAllowed, systemResolver, type Resolver } from './outbound.ts';

export interface DestinationCheckOptions {
  /**
   * `ROTSCOPE_ALLOW_PRIVATE_ADDRESSES`: when set, every destination passes, unresolved. A
   * configuration with `allowPrivateAddress: true` passes too (the channel's own switch).
   */
  allowPrivate: boolean;
  /** Resolves host names. Default {@link systemResolver}. */
  resolve?: Resolver;
  /** How long a lookup may take before the name is given the benefit of the doubt (ms). Default 2000. */
  timeoutMs?: number;
}

/** A destination refused: the message and the configuration key it is about. */
export interface RefusedDestination {
  message: string;
  path: string[];
}

/** The configuration keys that name a destination: webhook `url`, Slack `webhookUrl`, email `host`. */
function destinations(config: Record<string, unknown>): Array<{ key: string; host: string }> {
  const found: Array<{ key: string; host: string }> = [];
  for (const key of ['url', 'webhookUrl'] as const) {
    const value = config[key];
    if (typeof value !== 'string') continue;
    try {
      found.push({ key, host: new URL(value).hostname });
    } catch {
      // Not a URL: the configuration's own validation says so.
    }
  }
  if (typeof config.host === 'string' && config.host !== '')
    found.push({ key: 'host', host: config.host });
  return found;
}

/**
 * Checks the destinations named in a channel configuration (a new or patched configuration
 * as received, or a channel's settings). Returns a message naming the field (as the form
 * labels it), the channel's `allowPrivateAddress` and `ROTSCOPE_ALLOW_PRIVATE_ADDRESSES` when
 * a destination would be refused at send time:
 * a literal private, loopback, link-local or reserved address, a `localhost` or metadata
 * name, or a name that resolves to such an address. A name that does not resolve, or not
 * within the timeout, passes: DNS may be down or differ at creation, and the sender checks
 * again at every send. Nothing is resolved when private destinations are allowed.
 */
export async function checkDestinations(
  config: Record<string, unknown>,
  options: DestinationCheckOptions,
): Promise<RefusedDestination | undefined> {
  if (options.allowPrivate || config.allowPrivateAddress === true) return undefined;
  const timeoutMs = options.timeoutMs ?? 2_000;
  for (const { key, host } of destinations(config)) {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), timeoutMs);
    });
    try {
      const outcome = await Promise.race([
        resolveAllowed(host, false, options.resolve ?? systemResolver),
        timedOut,
      ]);
      if (outcome?.ok === false && outcome.blocked)
        return { message: `${fieldLabel([key])}: ${outcome.error}`, path: [key] };
    } finally {
      clearTimeout(timer);
    }
  }
  return undefined;
}
