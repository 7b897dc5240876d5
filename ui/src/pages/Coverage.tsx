/** Placeholder: the Coverage page is being built. */
import type { Route } from '../router.ts';

export default function CoveragePage(_props: { route: Route }) {
  return <h1>Coverage</h1>;
}
