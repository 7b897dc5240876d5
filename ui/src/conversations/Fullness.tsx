/** The fullest call of a conversation: its share of the window, coloured as the status line is. */
import { formatShare, formatTokens, usageLevel } from '../format.ts';

/**
 * `windowUnknown`: models of its calls with token counts but no window (no source knows them):
 * said as "window unknown", not left blank, since those calls are not judged for context too full.
 */
export function Fullness({
  share,
  tokens,
  windowUnknown = [],
}: {
  share: number | null;
  tokens: number | null;
  windowUnknown?: readonly string[];
}) {
  const unknownTitle = `no window known for ${windowUnknown.join(', ')}: those calls are not judged for context too full; set a window override on the Context rot alert page`;
  if (share === null)
    return windowUnknown.length > 0 ? (
      <span className="sight-blind window-unknown" title={unknownTitle}>
        window unknown{tokens === null ? '' : ` · ${formatTokens(tokens)} tokens`}
      </span>
    ) : (
      <span className="muted" title="no call reported both its token count and its window">
        {tokens === null ? '–' : `${formatTokens(tokens)} tokens`}
      </span>
    );
  const level = usageLevel(share);
  return (
    <span className={`fullness usage-${level}`} title={`${formatTokens(tokens)} tokens`}>
      <span className="fullness-bar">
        <span style={{ width: `${Math.min(100, Math.round(share * 100))}%` }} />
      </span>
      {formatShare(share)}
      {windowUnknown.length > 0 && (
        <span className="sight-blind window-unknown" title={unknownTitle}>
          {' '}
          · window unknown for {windowUnknown.join(', ')}
        </span>
      )}
    </span>
  );
}
