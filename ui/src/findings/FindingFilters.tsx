/**
 * The findings list's filters: detector, severity, time range and model, kept in the route.
 * The model applies on Enter or when the field is left, not at every keystroke.
 */
import { useEffect, useState } from 'react';
import { DETECTORS, SEVERITIES } from './detectors.ts';

export const RANGES = [
  { id: '1h', label: 'Last hour', ms: 3_600_000 },
  { id: '24h', label: 'Last 24 hours', ms: 86_400_000 },
  { id: '7d', label: 'Last 7 days', ms: 7 * 86_400_000 },
  { id: '30d', label: 'Last 30 days', ms: 30 * 86_400_000 },
] as const;

export interface Filters {
  detector: string;
  severity: string;
  range: string;
  model: string;
}

export function FindingFilters({
  filters,
  models,
  onChange,
}: {
  filters: Filters;
  /** Models to suggest (those of the findings seen so far). */
  models: string[];
  onChange: (next: Filters) => void;
}) {
  const set = (key: keyof Filters) => (value: string) => onChange({ ...filters, [key]: value });
  const [model, setModel] = useState(filters.model);
  useEffect(() => setModel(filters.model), [filters.model]);
  const applyModel = () => {
    if (model.trim() !== filters.model) set('model')(model.trim());
  };
  return (
    <form
      className="filters"
      onSubmit={(event) => {
        event.preventDefault();
        applyModel();
      }}
    >
      <label>
        Detector
        <select value={filters.detector} onChange={(event) => set('detector')(event.target.value)}>
          <option value="">All</option>
          {DETECTORS.map((detector) => (
            <option key={detector.id} value={detector.id}>
              {detector.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Severity
        <select value={filters.severity} onChange={(event) => set('severity')(event.target.value)}>
          <option value="">All</option>
          {SEVERITIES.map((severity) => (
            <option key={severity} value={severity}>
              {severity}
            </option>
          ))}
        </select>
      </label>
      <label>
        Time
        <select value={filters.range} onChange={(event) => set('range')(event.target.value)}>
          <option value="">Any time</option>
          {RANGES.map((range) => (
            <option key={range.id} value={range.id}>
              {range.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Model
        <input
          list="finding-models"
          value={model}
          placeholder="any model (Enter)"
          onChange={(event) => setModel(event.target.value)}
          onBlur={applyModel}
        />
        <datalist id="finding-models">
          {models.map((model) => (
            <option key={model} value={model} />
          ))}
        </datalist>
      </label>
    </form>
  );
}
