/** The instrumentation scope of this package's spans. */
export const TRACER_NAME = '@rotscope/sdk';
export const TRACER_VERSION = '0.1.0';
