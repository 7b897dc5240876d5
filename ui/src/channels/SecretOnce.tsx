/**
 * A webhook's signing secret, right after the channel was created: the only time the API
 * returns it. It lives in this page's memory only; a reload or leaving the page loses it.
 */
export function SecretOnce({
  channelName,
  secret,
  onDismiss,
}: {
  channelName: string;
  secret: string;
  onDismiss: () => void;
}) {
  return (
    <div className="secret-once" role="status">
      <p>
        Signing secret of <strong>{channelName}</strong>, shown once: store it now, it is never
        shown again. Verify the <code>webhook-signature</code> header of each message with it.
      </p>
      <code className="secret" aria-label="the signing secret, shown once">
        {secret}
      </code>
      <button type="button" className="secondary" onClick={onDismiss}>
        I stored it
      </button>
    </div>
  );
}
