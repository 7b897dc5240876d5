/**
 * docs/grafana/rotscope-dashboard.json: every SQL it holds (panel targets and template
 * variables), with Grafana's macros expanded as its PostgreSQL data source expands them, runs
 * as the documented read-only role (docs/reporting.md) against the reporting_v1 views, on both
 * backends, and returns the rows of the seeded day: a query on a raw table, a misspelt column or
 * a filter that matches nothing fails here.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  asRole,
  createDocumentedRoles,
  seedReporting,
  SEED_DAY,
} from '../helpers/reporting-seed.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

interface Target {
  refId: string;
  rawSql?: string;
  format?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  id: number;
  title: string;
  type: string;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  panels?: Panel[];
}
interface Dashboard {
  __inputs: Array<{ name: string; pluginId: string }>;
  panels: Panel[];
  templating: {
    list: Array<{ name: string; query: string | { rawSql?: string; query?: string } }>;
  };
}

const dashboard = JSON.parse(
  readFileSync(new URL('../../docs/grafana/rotscope-dashboard.json', import.meta.url), 'utf8'),
) as Dashboard;
const DOC = readFileSync(new URL('../../docs/reporting.md', import.meta.url), 'utf8');

/** The dashboard's time range in the test: the day before the seeded day to the day after. */
const FROM = new Date(Date.parse(`${SEED_DAY}T00:00:00Z`) - 86_400_000).toISOString();
const TO = new Date(Date.parse(`${SEED_DAY}T00:00:00Z`) + 2 * 86_400_000).toISOString();

/**
 * Expands what Grafana's PostgreSQL data source expands: `$__timeFilter(col)` to
 * `col BETWEEN '<from>' AND '<to>'`, `$__timeFrom()`, `$__timeTo()`, and the multi-value
 * `$workspace` to a quoted list. Throws on any other `$` macro or variable left.
 */
function expandMacros(text: string, workspaces: readonly string[]): string {
  const iso = (value: string) => `'${value.replace(/\.\d{3}Z$/, 'Z')}'`;
  const expanded = text
    .replace(
      /\$__timeFilter\(([^)]+)\)/g,
      (_m, column: string) => `${column.trim()} BETWEEN ${iso(FROM)} AND ${iso(TO)}`,
    )
    .replaceAll('$__timeFrom()', iso(FROM))
    .replaceAll('$__timeTo()', iso(TO))
    .replace(
      /\$\{workspace(?::[a-z]+)?\}|\$workspace\b/g,
      workspaces.map((w) => `'${w}'`).join(','),
    );
  if (expanded.includes('$')) throw new Error(`unexpanded macro or variable in: ${expanded}`);
  return expanded;
}

function allPanels(panels: readonly Panel[]): Panel[] {
  return panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])]);
}

const queryPanels = allPanels(dashboard.panels).filter((panel) => panel.type !== 'row');
const variables = dashboard.templating.list.map((variable) => ({
  name: variable.name,
  sql:
    typeof variable.query === 'string'
      ? variable.query
      : (variable.query.rawSql ?? variable.query.query ?? ''),
}));

describe('the Grafana dashboard (docs/grafana/rotscope-dashboard.json)', () => {
  it('uses one PostgreSQL data source input, and SQL on reporting_v1 only', () => {
    expect(dashboard.__inputs).toEqual([
      expect.objectContaining({ name: 'DS_ROTSCOPE', pluginId: 'grafana-postgresql-datasource' }),
    ]);
    expect(queryPanels.length).toBeGreaterThanOrEqual(10);
    for (const panel of queryPanels) {
      expect(panel.targets, panel.title).toHaveLength(1);
      for (const target of panel.targets ?? []) {
        expect(target.datasource?.uid, panel.title).toBe('${DS_ROTSCOPE}');
        expect(target.rawSql, panel.title).toMatch(/\bFROM reporting_v1\.\w+/);
        // Every relation named after FROM or JOIN is a reporting view.
        for (const [, relation] of target.rawSql!.matchAll(/\b(?:FROM|JOIN)\s+([\w.]+)/gi))
          expect(relation, panel.title).toMatch(/^reporting_v1\.\w+$/);
      }
    }
  });

  describe('every query runs as the read-only role and returns the seeded rows', () => {
    let store: TestStore;
    let roles: Awaited<ReturnType<typeof createDocumentedRoles>>;
    beforeAll(async () => {
      store = await createTestStore();
      await seedReporting(store.db);
      roles = await createDocumentedRoles(store.db, DOC);
    });
    afterAll(async () => {
      await roles?.drop();
      await store?.close();
    });

    it('the template variable lists the workspaces', async () => {
      await asRole(store, roles.login, async (query) => {
        for (const variable of variables) {
          const rows = await query(expandMacros(variable.sql, []));
          expect(
            rows.map((row) => Object.values(row)[0]),
            variable.name,
          ).toEqual(['acme', 'default']);
        }
      });
    });

    it.each(queryPanels.map((panel) => [panel.title, panel] as const))(
      '%s',
      async (_title, panel) => {
        await asRole(store, roles.login, async (query) => {
          for (const target of panel.targets ?? []) {
            const rows = await query(expandMacros(target.rawSql!, ['acme', 'default']));
            expect(rows.length, panel.title).toBeGreaterThan(0);
            // Time series frames need a time column; Grafana rejects them otherwise.
            if (target.format === 'time_series') expect(Object.keys(rows[0]!)).toContain('time');
          }
          // Another workspace sees none of acme's rows.
          const none = await query(expandMacros(panel.targets![0]!.rawSql!, ['nobody']));
          expect(none, panel.title).toEqual([]);
        });
      },
    );
  });
});
