/**
 * The Context rot alert (admin): the enabled switch, the seven knobs with their meaning,
 * default and the API's messages, window overrides, the channels it sends to, a preview of what
 * the knobs on the page would have found in the last 7 days, and save. Nothing is checked here
 * that the API does not check: what it says is shown beside the knob it names, and an invalid
 * form saves nothing (the API refuses the whole PUT).
 */
import { useEffect, useMemo, useState } from 'react';
import { AlertChannels } from '../alert/AlertChannels.tsx';
import { Knobs } from '../alert/Knobs.tsx';
import {
  problemsOf,
  placeErrors,
  toBody,
  toDraft,
  type AlertSettings,
  type Draft,
  type PlacedErrors,
  type Preview,
} from '../alert/model.ts';
import { PreviewPanel } from '../alert/PreviewPanel.tsx';
import { WindowOverrides } from '../alert/WindowOverrides.tsx';
import { api, ApiError, useApi } from '../api.ts';
import { ErrorMessage, Loading } from '../components/Status.tsx';
import { formatTime } from '../format.ts';
import type { Route } from '../router.ts';

const PATH = '/api/alerts/context-rot';
const NO_ERRORS: PlacedErrors = { knobs: {}, overrides: {}, channels: [], other: [] };

type Busy = 'saving' | 'previewing' | null;

export default function AlertPage(_props: { route: Route }) {
  const loaded = useApi<AlertSettings>(PATH);
  const [saved, setSaved] = useState<AlertSettings>();
  const [draft, setDraft] = useState<Draft>();
  const [errors, setErrors] = useState<PlacedErrors>(NO_ERRORS);
  const [busy, setBusy] = useState<Busy>(null);
  const [notice, setNotice] = useState<string>();
  const [preview, setPreview] = useState<Preview>();

  useEffect(() => {
    if (!loaded.data) return;
    setSaved(loaded.data);
    setDraft(toDraft(loaded.data));
  }, [loaded.data]);

  const dirty = useMemo(
    () =>
      saved !== undefined &&
      draft !== undefined &&
      JSON.stringify(toBody(draft)) !== JSON.stringify(toBody(toDraft(saved))),
    [saved, draft],
  );

  if (loaded.error) return <ErrorMessage error={loaded.error} />;
  if (!saved || !draft) return <Loading what="the alert" />;

  const change = (next: Partial<Draft>) => {
    setDraft({ ...draft, ...next });
    setNotice(undefined);
  };

  /** Runs a request with the form's body; the API's refusal is placed beside the knobs. */
  const submit = async <T,>(kind: Exclude<Busy, null>, request: () => Promise<T>) => {
    setBusy(kind);
    setNotice(undefined);
    try {
      const result = await request();
      setErrors(NO_ERRORS);
      return result;
    } catch (error) {
      if (error instanceof ApiError && error.status === 400)
        setErrors(placeErrors(problemsOf(error)));
      else setErrors({ ...NO_ERRORS, other: [(error as Error).message] });
      return undefined;
    } finally {
      setBusy(null);
    }
  };

  const save = async () => {
    const result = await submit('saving', () =>
      api<AlertSettings>(PATH, { method: 'PUT', body: toBody(draft) }),
    );
    if (!result) {
      setNotice('Not saved: fix the values marked below.');
      return;
    }
    setSaved(result);
    setDraft(toDraft(result));
    setNotice(`Saved at ${formatTime(result.updatedAt)}. The next evaluation uses these knobs.`);
  };

  const runPreview = async () => {
    const result = await submit('previewing', () =>
      api<Preview>(`${PATH}/preview`, { method: 'POST', body: toBody(draft) }),
    );
    setPreview(result);
  };

  const anyError =
    Object.keys(errors.knobs).length > 0 ||
    Object.keys(errors.overrides).length > 0 ||
    errors.channels.length > 0 ||
    errors.other.length > 0;

  return (
    <div className="alert-page">
      <h1>Context rot alert</h1>
      <p className="muted">
        One alert per workspace runs the four detectors over every conversation. Changes apply to
        calls evaluated after saving; findings already raised stay as they are.
        {saved.updatedAt
          ? ` Last saved ${formatTime(saved.updatedAt)}.`
          : ' These are the defaults (never changed).'}
      </p>

      <label className="switch">
        <input
          type="checkbox"
          role="switch"
          checked={draft.enabled}
          onChange={(event) => change({ enabled: event.target.checked })}
        />
        <span>{draft.enabled ? 'Enabled' : 'Disabled'}</span>
        <span className="muted">
          {draft.enabled
            ? ' — findings are stored and sent to the channels below.'
            : ' — calls evaluated while disabled are never reported.'}
        </span>
      </label>

      {errors.other.map((message) => (
        <p key={message} className="error" role="alert">
          {message}
        </p>
      ))}

      <h2>Knobs</h2>
      <Knobs
        values={draft.thresholds}
        defaults={saved.defaults?.thresholds}
        errors={errors.knobs}
        onChange={(key, value) => change({ thresholds: { ...draft.thresholds, [key]: value } })}
      />

      <h2>Window overrides</h2>
      <WindowOverrides
        rows={draft.windowOverrides}
        errors={errors.overrides}
        onChange={(windowOverrides) => change({ windowOverrides })}
      />

      <h2>Channels</h2>
      <AlertChannels
        attached={draft.channels}
        errors={errors.channels}
        onChange={(channels) => change({ channels })}
      />

      <div className="alert-actions">
        <button type="button" disabled={busy !== null} onClick={() => void save()}>
          {busy === 'saving' ? 'Saving…' : 'Save'}
        </button>
        <button
          type="button"
          className="secondary"
          disabled={busy !== null}
          onClick={() => void runPreview()}
        >
          {busy === 'previewing' ? 'Replaying…' : 'Preview the last 7 days'}
        </button>
        <button
          type="button"
          className="secondary"
          disabled={!dirty || busy !== null}
          onClick={() => {
            setDraft(toDraft(saved));
            setErrors(NO_ERRORS);
            setNotice(undefined);
          }}
        >
          Discard changes
        </button>
        {dirty && <span className="muted">Unsaved changes</span>}
        {notice && (
          <span className={anyError ? 'error' : 'ok'} role="status" data-testid="alert-notice">
            {notice}
          </span>
        )}
      </div>

      <h2>Preview</h2>
      {preview ? (
        <PreviewPanel preview={preview} />
      ) : (
        <p className="muted">
          See what the knobs on this page would have found in the stored calls of the last 7 days,
          before you save them: the same detectors the evaluator runs, over the same calls.
        </p>
      )}
    </div>
  );
}
