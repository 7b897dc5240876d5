/**
 * The findings list's filters: detector, severity, time range, model, project and whether
 * someone acknowledged it, kept in the route. Model and project apply on Enter or when the
 * field is left, not at every keystroke; the project matches exactly as stored (the API's
 * `?project=`), so the field suggests the projects of the findings seen so far.
 */
import { useEffect, useState } from 'react';
import { DETECTORS, SEVERITIES } from './detectors.ts';

export const RANGES = [
  { id: '1h', label: 'Last hour', ms: 3_600_000 },
  { id: '24h', label: 'Last 24 hours', ms: 86_400_000 },
  { id: '7d', label: 'Last 7 days', ms: 7 * 86_400_000 },
  { id: '30d', label: 'Last 30 days', ms: 30 * 86_400_000 },
] as const;

/** The `acknowledged` filter's choices ('' for all). */
export const ACKNOWLEDGED = [
  { id: 'false', label: 'Not acknowledged' },
  { id: 'true', label: 'Acknowledged' },
] as const;

export interface Filters {
  detector: string;
  severity: string;
  range: string;
  model: string;
  project: string;
  acknowledged: string;
}

export function FindingFilters({
  filters,
  models,
  projects,
  onChange,
}: {
  filters: Filters;
  /** Models to suggest (those of the findings seen so far). */
  models: string[];
  /** Projects to suggest (those of the findings seen so far). */
  projects: string[];
  onChange: (next: Filters) => void;
}) {
  const set = (key: keyof Filters) => (value: string) => onChange({ ...filters, [key]: value });
  const [model, setModel] = useState(filters.model);
  const [project, setProject] = useState(filters.project);
  useEffect(() => setModel(filters.model), [filters.model]);
  useEffect(() => setProject(filters.project), [filters.project]);
  const applyModel = () => {
    if (model.trim() !== filters.model) set('model')(model.trim());
  };
  const applyProject = () => {
    if (project.trim() !== filters.project) set('project')(project.trim());
  };
  return (
    <form
      className="filters"
      onSubmit={(event) => {
        event.preventDefault();
        if (model.trim() !== filters.model || project.trim() !== filters.project)
          onChange({ ...filters, model: model.trim(), project: project.trim() });
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
          onKeyDown={(event) => {
            if (event.key !== 'Enter') return;
            event.preventDefault();
            applyModel();
          }}
          onBlur={applyModel}
        />
        <datalist id="finding-models">
          {models.map((model) => (
            <option key={model} value={model} />
          ))}
        </datalist>
      </label>
      <label>
        Project
        <input
          name="project"
          list="finding-projects"
          value={project}
          placeholder="any project (Enter)"
          title="The working directory or repository, exactly as the findings show it"
          onChange={(event) => setProject(event.target.value)}
          onKeyDown={(event) => {
            // two text fields: Enter no longer submits the form by itself
            if (event.key !== 'Enter') return;
            event.preventDefault();
            applyProject();
          }}
          onBlur={applyProject}
        />
        <datalist id="finding-projects">
          {projects.map((project) => (
            <option key={project} value={project} />
          ))}
        </datalist>
      </label>
      <label>
        Acknowledged
        <select
          name="acknowledged"
          value={filters.acknowledged}
          onChange={(event) => set('acknowledged')(event.target.value)}
        >
          <option value="">All</option>
          {ACKNOWLEDGED.map((choice) => (
            <option key={choice.id} value={choice.id}>
              {choice.label}
            </option>
          ))}
        </select>
      </label>
    </form>
  );
}
