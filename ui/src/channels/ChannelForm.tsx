/**
 * Creates a channel: a webhook (URL, optional signing secret: one is generated when left
 * empty), Slack (incoming webhook URL) or email (SMTP server, sender, recipients). Webhook and
 * email channels have an "Allow private address" switch (`config.allowPrivateAddress`) for a
 * receiver or SMTP relay on this machine or network, off by default. The API's refusal (an
 * invalid field in the form's words, or a private destination saying how to allow it) is shown
 * as it is.
 */
import { useState, type FormEvent } from 'react';
import { api, useAction } from '../api.ts';
import { ErrorMessage } from '../components/Status.tsx';
import type { ChannelType, CreatedChannel } from './types.ts';

interface Draft {
  type: ChannelType;
  name: string;
  url: string;
  secret: string;
  webhookUrl: string;
  host: string;
  port: string;
  secure: boolean;
  user: string;
  password: string;
  from: string;
  to: string;
  allowPrivateAddress: boolean;
}

const EMPTY: Draft = {
  type: 'webhook',
  name: '',
  url: '',
  secret: '',
  webhookUrl: '',
  host: '',
  port: '587',
  secure: false,
  user: '',
  password: '',
  from: '',
  to: '',
  allowPrivateAddress: false,
};

function configOf(draft: Draft): Record<string, unknown> {
  const privateAddress = draft.allowPrivateAddress ? { allowPrivateAddress: true } : {};
  if (draft.type === 'webhook')
    return {
      url: draft.url.trim(),
      ...(draft.secret.trim() ? { secret: draft.secret.trim() } : {}),
      ...privateAddress,
    };
  if (draft.type === 'slack') return { webhookUrl: draft.webhookUrl.trim() };
  return {
    host: draft.host.trim(),
    port: Number(draft.port),
    secure: draft.secure,
    ...(draft.user.trim() ? { user: draft.user.trim() } : {}),
    ...(draft.password ? { password: draft.password } : {}),
    from: draft.from.trim(),
    to: draft.to
      .split(/[,\s]+/)
      .map((address) => address.trim())
      .filter((address) => address !== ''),
    ...privateAddress,
  };
}

export function ChannelForm({ onCreated }: { onCreated: (channel: CreatedChannel) => void }) {
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const { busy, error, run } = useAction();
  const field = (key: keyof Draft) => (event: { target: { value: string } }) =>
    setDraft((previous) => ({ ...previous, [key]: event.target.value }));

  async function submit(event: FormEvent) {
    event.preventDefault();
    await run(async () => {
      const created = await api<CreatedChannel>('/api/channels', {
        method: 'POST',
        body: { type: draft.type, name: draft.name.trim(), config: configOf(draft) },
      });
      setDraft(EMPTY);
      onCreated(created);
    });
  }

  return (
    <form className="channel-form" onSubmit={submit} aria-label="New channel">
      <h2>New channel</h2>
      <div className="row">
        <label>
          Type
          <select
            value={draft.type}
            onChange={(event) =>
              setDraft((previous) => ({ ...previous, type: event.target.value as ChannelType }))
            }
          >
            <option value="webhook">Webhook</option>
            <option value="slack">Slack</option>
            <option value="email">Email</option>
          </select>
        </label>
        <label>
          Name
          <input
            value={draft.name}
            onChange={field('name')}
            placeholder="on-call webhook"
            maxLength={200}
          />
        </label>
      </div>
      {draft.type === 'webhook' && (
        <div className="row">
          <label className="wide">
            URL
            <input
              value={draft.url}
              onChange={field('url')}
              placeholder="https://example.com/rotscope"
            />
          </label>
          <label>
            Signing secret
            <input
              value={draft.secret}
              onChange={field('secret')}
              placeholder="whsec_… (generated when empty)"
              autoComplete="off"
            />
          </label>
        </div>
      )}
      {draft.type === 'slack' && (
        <div className="row">
          <label className="wide">
            Incoming webhook URL
            <input
              type="password"
              value={draft.webhookUrl}
              onChange={field('webhookUrl')}
              placeholder="https://hooks.slack.com/services/…"
              autoComplete="off"
            />
          </label>
        </div>
      )}
      {draft.type === 'email' && (
        <>
          <div className="row">
            <label>
              SMTP host
              <input value={draft.host} onChange={field('host')} placeholder="smtp.example.com" />
            </label>
            <label>
              Port
              <input value={draft.port} onChange={field('port')} inputMode="numeric" />
            </label>
            <label className="check">
              <input
                type="checkbox"
                checked={draft.secure}
                onChange={(event) =>
                  setDraft((previous) => ({ ...previous, secure: event.target.checked }))
                }
              />
              TLS from the start (port 465)
            </label>
          </div>
          <div className="row">
            <label>
              User
              <input value={draft.user} onChange={field('user')} autoComplete="off" />
            </label>
            <label>
              Password
              <input
                type="password"
                value={draft.password}
                onChange={field('password')}
                autoComplete="off"
              />
            </label>
          </div>
          <div className="row">
            <label>
              From
              <input
                value={draft.from}
                onChange={field('from')}
                placeholder="rotscope@example.com"
              />
            </label>
            <label className="wide">
              To
              <input value={draft.to} onChange={field('to')} placeholder="a@example.com, b@…" />
            </label>
          </div>
        </>
      )}
      {draft.type !== 'slack' && (
        <div className="row">
          <label className="check">
            <input
              type="checkbox"
              checked={draft.allowPrivateAddress}
              onChange={(event) =>
                setDraft((previous) => ({
                  ...previous,
                  allowPrivateAddress: event.target.checked,
                }))
              }
            />
            Allow private address
          </label>
          <span className="muted hint">
            for a receiver or SMTP relay on this machine or your network (127.0.0.1, 10.x,
            192.168.x, …); refused otherwise
          </span>
        </div>
      )}
      <button type="submit" disabled={busy || draft.name.trim() === ''}>
        Create channel
      </button>
      <ErrorMessage error={error} />
    </form>
  );
}
