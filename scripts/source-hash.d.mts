/** The hash of what dist/ is compiled from (scripts/source-hash.mjs). */
export function sourceHash(root: string): string;
/** True when `<root>/dist` was built from exactly this checkout's source. */
export function distIsFresh(root: string): boolean;
/** '1' (src/ through tsx) unless dist/ was built from this checkout ('0'); the environment wins. */
export function childrenFromSource(root: string): string;
