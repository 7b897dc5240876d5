/**
 * A test store whose ingest writes are slow, as a busy database's would be: every batch the
 * group commit writes (each runs in its own `SAVEPOINT ingest_job`) takes `msPerBatch` longer
 * before its writes start. Everything else (the API, reads) is the store as it is, on either
 * backend.
 */
import type { RawConnection } from '../../src/store/raw-connection.ts';
import type { TestStore } from './store.ts';

export function slowIngestStore(store: TestStore, msPerBatch: number): TestStore {
  return {
    ...store,
    async connect(): Promise<RawConnection> {
      const connection = await store.connect();
      return {
        session: connection.session,
        copyIn: (text, data) => connection.copyIn(text, data),
        release: (error) => connection.release(error),
        async query(text, params) {
          if (text === 'SAVEPOINT ingest_job')
            await new Promise((resolve) => setTimeout(resolve, msPerBatch));
          return connection.query(text, params);
        },
      };
    },
  };
}
