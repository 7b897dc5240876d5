/**
 * `COPY … FROM STDIN` on a `pg` client in one write: the Query message, the data as one
 * CopyData message and CopyDone leave in a single corked write, without waiting for the
 * server's CopyInResponse first (pg-copy-streams waits for it: a round trip and three more
 * socket writes per COPY, on a path that runs two COPYs per ingest batch).
 *
 * The protocol allows it: the backend reads its input in order, so the data simply waits in
 * the socket until the COPY starts. If the statement fails before or during the copy, the
 * backend answers ErrorResponse and ReadyForQuery, and drops any CopyData or CopyDone that
 * follow outside copy mode ("Accept but ignore these messages, per protocol spec",
 * PostgreSQL's postgres.c; the protocol's "COPY Operations" section says the same).
 *
 * The object is a `pg` submittable (what `client.query()` accepts besides text): the client
 * calls `submit` when the connection is free and the `handle…` methods as the answer arrives.
 */
import type pg from 'pg';

const COPY_DATA = 0x64; // 'd'
const COPY_DONE = Buffer.from([0x63, 0, 0, 0, 4]); // 'c', length 4

class PipelinedCopy implements pg.Submittable {
  constructor(
    readonly text: string,
    readonly data: Buffer,
    readonly resolve: () => void,
    readonly reject: (error: Error) => void,
  ) {}

  submit(connection: pg.Connection): void {
    const header = Buffer.allocUnsafe(5);
    header[0] = COPY_DATA;
    header.writeUInt32BE(this.data.length + 4, 1);
    const { stream } = connection;
    stream.cork();
    connection.query(this.text);
    stream.write(header);
    stream.write(this.data);
    stream.write(COPY_DONE);
    stream.uncork();
  }

  /** pg's query timeout replaces this; present so the client finds it. */
  callback(): void {}

  handleCopyInResponse(): void {} // the data went with the statement
  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyData(): void {}

  // pg calls one of these once: after an error it drops the active query, so the
  // ReadyForQuery that follows reaches no handler (a settled promise ignores a second call).
  handleError(error: Error): void {
    this.reject(error);
  }

  handleReadyForQuery(): void {
    this.resolve();
  }
}

/** Runs `text` (a `COPY … FROM STDIN` statement) on `client` with `data` as its input. */
export function copyIn(client: pg.ClientBase, text: string, data: Buffer): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    client.query(new PipelinedCopy(text, data, resolve, reject));
  });
}
