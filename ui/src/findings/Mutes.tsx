/**
 * Mutes, beside the findings list: "Mute new findings like these" mutes what the list's detector,
 * project and model filters name (at least one set; the API refuses a mute of everything), for a
 * while or until deleted; the mutes below, each with what it matches, until when, and Delete. A
 * muted finding is still stored and listed; its deliveries say `muted` on the Channels page.
 */
import { useState } from 'react';
import { api, useAction, useApi } from '../api.ts';
import type { Answer, Item } from '../api-types.ts';
import { ErrorMessage } from '../components/Status.tsx';
import { formatTime } from '../format.ts';
import { detectorLabel } from './detectors.ts';

type Mute = Item<Answer<'/api/mutes'>>;

const DURATIONS = [
  { id: '', label: 'until deleted', ms: null },
  { id: '1d', label: 'for a day', ms: 86_400_000 },
  { id: '7d', label: 'for 7 days', ms: 7 * 86_400_000 },
  { id: '30d', label: 'for 30 days', ms: 30 * 86_400_000 },
] as const;

/** What a mute matches, in words: `Context too full · /srv/app/alpha-svc · any model`. */
function matches(mute: {
  detector: string | null;
  project: string | null;
  model: string | null;
}): string {
  return [
    mute.detector ? detectorLabel(mute.detector) : 'any detector',
    mute.project ?? 'any project',
    mute.model ?? 'any model',
  ].join(' · ');
}

export function Mutes({
  filters,
}: {
  /** The list's filters: what a new mute matches (empty: any). */
  filters: { detector: string; project: string; model: string };
}) {
  const list = useApi<Answer<'/api/mutes'>>('/api/mutes?limit=200');
  const action = useAction();
  const [duration, setDuration] = useState('');
  const wanted = {
    detector: filters.detector || null,
    project: filters.project || null,
    model: filters.model || null,
  };
  const named = wanted.detector !== null || wanted.project !== null || wanted.model !== null;

  const mute = () =>
    void action.run(async () => {
      const ms = DURATIONS.find((d) => d.id === duration)?.ms ?? null;
      await api('/api/mutes', {
        method: 'POST',
        body: {
          ...(wanted.detector ? { detector: wanted.detector } : {}),
          ...(wanted.project ? { project: wanted.project } : {}),
          ...(wanted.model ? { model: wanted.model } : {}),
          ...(ms !== null ? { until: new Date(Date.now() + ms).toISOString() } : {}),
        },
      });
      list.reload();
    });
  const remove = (id: string) =>
    void action.run(async () => {
      await api(`/api/mutes/${encodeURIComponent(id)}`, { method: 'DELETE' });
      list.reload();
    });

  const mutes: Mute[] = list.data?.items ?? [];
  return (
    <section className="mutes" aria-label="Mutes">
      <p className="mute-new">
        <button type="button" disabled={!named || action.busy} onClick={mute}>
          Mute new findings like these
        </button>{' '}
        <select
          aria-label="How long"
          value={duration}
          onChange={(event) => setDuration(event.target.value)}
        >
          {DURATIONS.map((d) => (
            <option key={d.id} value={d.id}>
              {d.label}
            </option>
          ))}
        </select>{' '}
        <span className="muted">
          {named
            ? `${matches(wanted)}: stored and listed, not sent`
            : 'choose a detector, project or model above first'}
        </span>
      </p>
      <ErrorMessage error={action.error ?? list.error} />
      {mutes.length > 0 && (
        <ul className="mute-list">
          {mutes.map((m) => (
            <li key={m.id} data-mute={m.id} className={m.active ? undefined : 'ended'}>
              Muted: {matches(m)}{' '}
              <span className="muted">
                {m.until
                  ? `${m.active ? 'until' : 'ended'} ${formatTime(m.until)}`
                  : 'until deleted'}
              </span>{' '}
              <button
                type="button"
                className="link"
                disabled={action.busy}
                onClick={() => remove(m.id)}
              >
                Delete
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
