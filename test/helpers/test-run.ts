/**
 * The process id of the test run that owns a database, written into its name after the prefix
 * (`rotscope_test_<pid>_…`, `rotscope_template_<pid>_…`): the vitest main process's, which the
 * global setup exports to its workers, else this process's. A run's teardown drops leftovers
 * only of runs no longer alive, never another running suite's databases on the same server.
 */
export const testRunPid = (): string => process.env.ROTSCOPE_TEST_RUN_PID ?? String(process.pid);
