/**
 * Whether message content (here: a compaction's summary text) may go on spans. Off unless
 * `configure({ captureContent: true })` says so or the GenAI instrumentations' own switch
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is on (`true`, `span_only`,
 * `span_and_event`; `false`, `no_content` and anything else are off).
 */

/** Settings of this package. */
export interface RotscopeSdkOptions {
  /** Record content (summary text) on spans. Defaults from the environment, see above. */
  captureContent?: boolean;
}

let captureContentSetting: boolean | undefined;

/** Changes the package's settings; an option left out keeps its current value. */
export function configure(options: RotscopeSdkOptions): void {
  if (options.captureContent !== undefined) {
    if (typeof options.captureContent !== 'boolean') {
      throw new TypeError(
        `@rotscope/sdk configure: captureContent must be a boolean, got ${typeof options.captureContent}`,
      );
    }
    captureContentSetting = options.captureContent;
  }
}

const CONTENT_ON = new Set(['true', '1', 'span_only', 'span_and_event']);

/** True when content capture is on (configure() first, then the environment). */
export function captureContent(): boolean {
  if (captureContentSetting !== undefined) return captureContentSetting;
  const env =
    typeof process === 'undefined'
      ? undefined
      : process.env['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'];
  return env !== undefined && CONTENT_ON.has(env.trim().toLowerCase());
}
