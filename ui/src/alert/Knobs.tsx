/** The seven knobs, grouped by detector: each with its explanation, its default and the API's messages. */
import { formatShare, formatTokens } from '../format.ts';
import {
  DETECTOR_TITLES,
  KNOBS,
  type DetectorId,
  type Knob,
  type ThresholdKey,
  type Thresholds,
} from './model.ts';
import { plural } from '../../../src/model/plural.ts';

function shown(knob: Knob, value: number): string {
  if (knob.unit === 'share') return `${value} (${formatShare(value)})`;
  if (knob.unit === 'tokens') return `${formatTokens(value)} tokens`;
  return plural(value, 'call');
}

function KnobField(props: {
  knob: Knob;
  value: string;
  defaultValue: number | undefined;
  errors: string[] | undefined;
  onChange: (value: string) => void;
}) {
  const { knob, value, defaultValue, errors, onChange } = props;
  const id = `knob-${knob.key}`;
  const asNumber = Number(value);
  const hint =
    knob.unit === 'share' && value.trim() !== '' && Number.isFinite(asNumber)
      ? `= ${formatShare(asNumber)}`
      : knob.unit === 'share'
        ? `a share, ${knob.range.minimum} to ${knob.range.maximum}`
        : `whole ${knob.unit}`;
  return (
    <div className={`knob${errors ? ' invalid' : ''}`} data-knob={knob.key}>
      <label htmlFor={id}>{knob.title}</label>
      <div className="knob-input">
        <input
          id={id}
          name={knob.key}
          inputMode="decimal"
          value={value}
          aria-invalid={errors ? true : undefined}
          aria-describedby={`${id}-explain`}
          onChange={(event) => onChange(event.target.value)}
        />
        <span className="muted">{hint}</span>
      </div>
      <p className="knob-explain muted" id={`${id}-explain`}>
        {knob.explain}
        {defaultValue !== undefined && (
          <span className="knob-default"> Default: {shown(knob, defaultValue)}.</span>
        )}
      </p>
      {errors?.map((message) => (
        <p key={message} className="error knob-error" role="alert">
          {message}
        </p>
      ))}
    </div>
  );
}

export function Knobs(props: {
  values: Record<ThresholdKey, string>;
  defaults: Thresholds | undefined;
  errors: Partial<Record<ThresholdKey, string[]>>;
  onChange: (key: ThresholdKey, value: string) => void;
}) {
  const detectors = [...new Set(KNOBS.map((k) => k.detector))] as DetectorId[];
  return (
    <div className="knob-groups">
      {detectors.map((detector) => (
        <fieldset key={detector} className="knob-group">
          <legend>{DETECTOR_TITLES[detector]}</legend>
          {KNOBS.filter((k) => k.detector === detector).map((knob) => (
            <KnobField
              key={knob.key}
              knob={knob}
              value={props.values[knob.key]}
              defaultValue={props.defaults?.[knob.key]}
              errors={props.errors[knob.key]}
              onChange={(value) => props.onChange(knob.key, value)}
            />
          ))}
        </fieldset>
      ))}
    </div>
  );
}
