/**
 * Three `rotscope serve` processes (real children of bin/rotscope.js) on one PostgreSQL behind a
 * round-robin client (issue 10, item 3):
 * - normal path: every expected finding exactly once, every delivery exactly once (a loopback
 *   webhook sink counts `webhook-id`s), and the processes' finding counters add up to the
 *   findings;
 * - kill -9 of one process mid-load, while it holds delivery claims (its sends are held open
 *   by the sink, attributed to it by their sockets): every acknowledged span is stored, every
 *   expected finding exists once, its claimed deliveries are sent again by the others once the
 *   lease runs out, and every delivery ends delivered.
 * PostgreSQL only: PGlite is one process.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../helpers/child-server.ts';
import { scrapeFindingCounters } from '../helpers/finding-counters.ts';
import { hex, jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';
import { createTestDatabase, usingPostgres } from '../helpers/store.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The local TCP ports of a process's sockets (Linux /proc), to tell whose request a sink holds. */
function tcpPortsOf(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (link.startsWith('socket:[')) inodes.add(link.slice(8, -1));
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length > 9 && inodes.has(fields[9]!))
        ports.add(Number.parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

interface Receipt {
  id: string;
  remotePort: number;
  at: number;
}

/**
 * A webhook sink on loopback. Answers 200 at once, or, while `hold` is on, holds requests open
 * unanswered until `release()`; remembers which held requests lost their connection.
 */
async function startSink() {
  const receipts: Receipt[] = [];
  const held = new Map<http.ServerResponse, Receipt & { closed: boolean }>();
  let hold = false;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const receipt = {
        id: String(req.headers['webhook-id']),
        remotePort: req.socket.remotePort ?? 0,
        at: Date.now(),
      };
      receipts.push(receipt);
      if (!hold) {
        res.writeHead(200).end('ok');
        return;
      }
      const entry = { ...receipt, closed: false };
      held.set(res, entry);
      res.on('close', () => {
        entry.closed = !res.writableFinished;
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    receipts,
    held,
    setHold(on: boolean) {
      hold = on;
    },
    /** Answers every held request still open with 200 and stops holding. */
    release() {
      hold = false;
      for (const [res, entry] of held) if (!entry.closed) res.writeHead(200).end('ok');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One conversation: six calls growing by 15% of gpt-4o's 128k window, every third one cut off. */
function conversation(id: string, base: bigint) {
  return Array.from({ length: 6 }, (_, call) => {
    const span = jsonSpan({
      traceId: hex(16), // each call its own run: context_too_full at 75% and 90%
      startNs: base + BigInt(call) * 1_000_000_000n,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.conversation.id': id,
        'gen_ai.usage.input_tokens': Math.round(128_000 * 0.15 * (call + 1)),
        'gen_ai.usage.output_tokens': 100,
        'gen_ai.response.finish_reasons': call % 3 === 2 ? 'length' : 'stop',
      },
    });
    return { spanId: span.spanId, body: JSON.stringify(jsonRequest([span])) };
  });
}
/** Per conversation: output_cut_off at calls 3 and 6, context_too_full at calls 5 and 6. */
const FINDINGS_PER_CONVERSATION = { context_too_full: 2, output_cut_off: 2 };

describe.skipIf(!usingPostgres)('three serve processes on one PostgreSQL', () => {
  let url: string;
  let servers: ChildServer[] = [];
  let sink: Awaited<ReturnType<typeof startSink>>;
  let client: pg.Client;

  beforeAll(async () => {
    url = (await createTestDatabase())!;
    sink = await startSink();
    const env = {
      DATABASE_URL: url,
      ROTSCOPE_EVALUATOR_QUIET_MS: '200',
      ROTSCOPE_EVALUATOR_POLL_MS: '100',
      ROTSCOPE_ALLOW_PRIVATE_ADDRESSES: 'true',
      // A delivery claim is leased for 2 × timeout + 5 s: 13 s here.
      ROTSCOPE_DELIVERY_TIMEOUT_MS: '4000',
    };
    // All three start at once: one migrates, the others wait for it.
    servers = await Promise.all([
      startChildServer(env),
      startChildServer(env),
      startChildServer(env),
    ]);
    client = new pg.Client({ connectionString: url });
    await client.connect();
    const [a, b] = servers as [ChildServer, ChildServer];
    const channel = (await (
      await fetch(`${a.url}/api/channels`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          type: 'webhook',
          name: 'sink',
          config: { url: `${sink.url}/hook` },
        }),
      })
    ).json()) as { id: string };
    const put = await fetch(`${b.url}/api/alerts/context-rot`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ channels: [{ id: channel.id, minSeverity: 'info' }] }),
    });
    expect(put.status).toBe(200);
  }, 300_000);

  afterAll(async () => {
    for (const server of servers) server.process.kill('SIGKILL');
    await Promise.all(servers.map((server) => server.exited));
    await client?.end();
    await sink?.close();
  });

  /** Round robin over the three in order, dead or alive; a batch not acknowledged goes to the next. */
  let turn = 0;
  async function sendUntilAcked(body: string): Promise<void> {
    for (;;) {
      const server = servers[turn++ % servers.length]!;
      try {
        const response = await fetch(`${server.url}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        await response.arrayBuffer();
        if (response.status === 200) return;
      } catch {
        // refused or reset: that process is gone
      }
      await sleep(20);
    }
  }

  async function findingsOf(prefix: string): Promise<Record<string, number>> {
    const { rows } = await client.query<{ detector: string; n: number }>(
      `SELECT detector, count(*)::int AS n FROM findings WHERE conversation_id LIKE $1 || '%' GROUP BY 1`,
      [prefix],
    );
    return Object.fromEntries(rows.map((row) => [row.detector, row.n]));
  }

  async function waitForFindings(prefix: string, conversations: number) {
    const expected = {
      context_too_full: FINDINGS_PER_CONVERSATION.context_too_full * conversations,
      output_cut_off: FINDINGS_PER_CONVERSATION.output_cut_off * conversations,
    };
    let got: Record<string, number> = {};
    for (let i = 0; i < 600; i++) {
      got = await findingsOf(prefix);
      const count = (counts: Record<string, number>) =>
        Object.values(counts).reduce((sum, n) => sum + n, 0);
      if (count(got) >= count(expected)) break;
      await sleep(200);
    }
    expect(got).toEqual(expected);
    const duplicates = await client.query(
      'SELECT detector, anchor FROM findings GROUP BY workspace_id, detector, anchor HAVING count(*) > 1',
    );
    expect(duplicates.rows).toEqual([]);
  }

  async function deliveryIdsOf(prefix: string): Promise<string[]> {
    const { rows } = await client.query<{ id: string }>(
      `SELECT d.id FROM deliveries d JOIN findings f ON f.id = d.finding_id
        WHERE f.conversation_id LIKE $1 || '%'`,
      [prefix],
    );
    return rows.map((row) => row.id);
  }

  it('normal path: each finding once, each delivery once, counters add up', async () => {
    const conversations = 12;
    const base = BigInt(Date.now()) * 1_000_000n;
    const batches = Array.from({ length: conversations }, (_, c) =>
      conversation(`rr-${c}`, base),
    ).flat();
    const queue = [...batches];
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let batch = queue.shift(); batch; batch = queue.shift())
          await sendUntilAcked(batch.body);
      }),
    );
    await waitForFindings('rr-', conversations);

    const total = conversations * 4;
    let ids: string[] = [];
    for (let i = 0; i < 600 && ids.length < total; i++) {
      ids = await deliveryIdsOf('rr-');
      await sleep(100);
    }
    expect(ids).toHaveLength(total);
    for (let i = 0; i < 600; i++) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM deliveries WHERE id = ANY($1) AND status = 'delivered'`,
        [ids],
      );
      if (rows[0]!.n === total) break;
      await sleep(100);
    }
    // A duplicate send would have been received by now: each row is delivered once its send returned.
    const received = sink.receipts.map((receipt) => receipt.id);
    expect(received.sort()).toEqual([...ids].sort());

    // Each finding was counted by the one process whose evaluator created it.
    const counters = await Promise.all(servers.map((server) => scrapeFindingCounters(server.url)));
    const sum = (key: string) => counters.reduce((total, c) => total + (c[key] ?? 0), 0);
    const { rows: bySeverity } = await client.query<{
      detector: string;
      severity: string;
      n: number;
    }>(`SELECT detector, severity, count(*)::int AS n FROM findings GROUP BY 1, 2`);
    for (const row of bySeverity)
      expect(
        sum(
          `rotscope_findings_created_total{detector="${row.detector}",severity="${row.severity}"}`,
        ),
        `${row.detector}/${row.severity}`,
      ).toBe(row.n);
    // Work was shared: more than one process created findings.
    expect(
      counters.filter((c) => Object.values(c).some((value) => value > 0)).length,
    ).toBeGreaterThan(1);
  }, 300_000);

  it('kill -9 of one process mid-load: nothing acknowledged is lost, the others take over its claims', async () => {
    const victim = servers[2]!;
    const receiptsBefore = sink.receipts.length;
    sink.setHold(true);

    // Senders generate conversations until the victim is dead and 36 more batches were acknowledged.
    const acked: string[] = [];
    let generated = 0;
    let killed = false;
    let ackedAfterKill = 0;
    const queue: Array<{ spanId: string; body: string }> = [];
    const base = BigInt(Date.now()) * 1_000_000n;
    const next = () => {
      if (queue.length === 0 && !(killed && ackedAfterKill >= 36))
        queue.push(...conversation(`kill-${generated++}`, base));
      return queue.shift();
    };
    const senders = Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let batch = next(); batch; batch = next()) {
          await sendUntilAcked(batch.body);
          acked.push(batch.spanId);
          if (killed) ackedAfterKill++;
        }
      }),
    );

    // Wait until the victim holds a delivery the sink has not answered (a claim in flight).
    let victimHeld: Receipt[] = [];
    while (victimHeld.length === 0) {
      await sleep(50);
      const ports = tcpPortsOf(victim.process.pid!);
      victimHeld = [...sink.held.values()].filter(
        (entry) => !entry.closed && ports.has(entry.remotePort),
      );
    }
    const ackedAtKill = acked.length;
    victim.process.kill('SIGKILL');
    killed = true;
    await victim.exited;
    // Its connections are gone; the others' held sends are answered now.
    sink.release();
    await senders;
    expect(ackedAtKill).toBeGreaterThan(0);
    expect(ackedAfterKill).toBeGreaterThanOrEqual(36);

    // Nothing acknowledged is lost.
    const stored = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM llm_calls WHERE span_id = ANY($1)',
      [acked],
    );
    expect(stored.rows[0]!.n).toBe(acked.length);
    expect(acked.length).toBe(generated * 6);

    // Every expected finding, once.
    await waitForFindings('kill-', generated);

    // Every delivery ends delivered: the victim's claims once their lease ran out, by the others.
    const total = generated * 4;
    let ids: string[] = [];
    for (let i = 0; i < 600 && ids.length < total; i++) {
      ids = await deliveryIdsOf('kill-');
      await sleep(100);
    }
    expect(ids).toHaveLength(total);
    let statuses: Array<{ id: string; status: string; attempts: number }> = [];
    for (let i = 0; i < 1200; i++) {
      statuses = (
        await client.query<{ id: string; status: string; attempts: number }>(
          'SELECT id, status, attempts FROM deliveries WHERE id = ANY($1)',
          [ids],
        )
      ).rows;
      if (statuses.every((row) => row.status === 'delivered')) break;
      await sleep(100);
    }
    expect(statuses.filter((row) => row.status !== 'delivered')).toEqual([]);
    const received = new Set(sink.receipts.slice(receiptsBefore).map((receipt) => receipt.id));
    expect(ids.filter((id) => !received.has(id))).toEqual([]);
    for (const orphan of victimHeld) {
      const row = statuses.find((status) => status.id === orphan.id);
      expect(row?.attempts, `${orphan.id} claimed again`).toBeGreaterThanOrEqual(2);
      const again = sink.receipts.filter(
        (receipt) => receipt.id === orphan.id && receipt.at > orphan.at,
      );
      expect(again.length, `${orphan.id} sent again by a survivor`).toBeGreaterThanOrEqual(1);
    }
  }, 600_000);
  it('a frozen process (SIGSTOP) mid-evaluation: its claim is released, ingest and evaluation go on', async () => {
    // The survivors of the kill: the first takes all traffic, the second is frozen while its
    // evaluator holds a claim (an open transaction, named rotscope-evaluator, on one of its
    // connections). Its sockets stay open, so only the server's idle-in-transaction limit set
    // by the evaluator (30 s) ends that session and frees the conversation.
    const [survivor, frozen] = servers as [ChildServer, ChildServer];
    /** Each wait of this test is bounded: a failure names the one that did not end. */
    const until = (what: string, ms: number) => {
      const deadline = Date.now() + ms;
      return () => {
        if (Date.now() > deadline) throw new Error(`still waiting after ${ms} ms: ${what}`);
      };
    };
    const sendTo = async (body: string) => {
      const check = until('the survivor to take a batch (200)', 120_000);
      let status = 0;
      for (;;) {
        const response = await fetch(`${survivor.url}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        await response.arrayBuffer();
        if (response.status === 200) return;
        status = response.status;
        try {
          check();
        } catch (error) {
          throw new Error(`${(error as Error).message}, last answer ${status}`);
        }
        await sleep(20);
      }
    };
    let generated = 0;
    let caught: number[] = [];
    const base = BigInt(Date.now()) * 1_000_000n;
    const load = (async () => {
      while (caught.length === 0) {
        for (const batch of conversation(`freeze-${generated++}`, base)) await sendTo(batch.body);
      }
    })();
    const catching = until('the frozen process to be stopped mid-evaluation', 180_000);
    while (caught.length === 0) {
      catching();
      const ports = [...tcpPortsOf(frozen.process.pid!)];
      frozen.process.kill('SIGSTOP');
      const { rows } = await client.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
          WHERE application_name = 'rotscope-evaluator' AND client_port = ANY($1::int[])`,
        [ports],
      );
      caught = rows.map((row) => row.pid);
      if (caught.length === 0) {
        frozen.process.kill('SIGCONT');
        await sleep(30);
      }
    }
    await load;

    // One more call into every conversation, through the survivor: none may wait on the
    // frozen claim forever (ingest upserts the conversation row the claim locks).
    await Promise.all(
      Array.from({ length: generated }, async (_, c) => {
        const span = jsonSpan({
          traceId: hex(16),
          startNs: base + 6_000_000_000n,
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'gpt-4o',
            'gen_ai.conversation.id': `freeze-${c}`,
            'gen_ai.usage.input_tokens': Math.round(128_000 * 0.95),
            'gen_ai.usage.output_tokens': 100,
            'gen_ai.response.finish_reasons': 'stop',
          },
        });
        await sendTo(JSON.stringify(jsonRequest([span])));
      }),
    );
    // The frozen evaluator's session was ended by the server.
    const ending = until("the server to end the frozen evaluator's session", 120_000);
    for (;;) {
      ending();
      const { rows } = await client.query(
        'SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1::int[])',
        [caught],
      );
      if (rows.length === 0) break;
      await sleep(200);
    }
    // Every conversation evaluated by the survivor, the one the frozen process held included:
    // the extra call at 95% is one more context_too_full each.
    const expected = { context_too_full: 3 * generated, output_cut_off: 2 * generated };
    let got: Record<string, number> = {};
    for (let i = 0; i < 1200; i++) {
      got = await findingsOf('freeze-');
      if ((got.context_too_full ?? 0) + (got.output_cut_off ?? 0) >= 5 * generated) break;
      await sleep(200);
    }
    expect(got).toEqual(expected);
  }, 600_000);
});
