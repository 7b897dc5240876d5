/** Placeholder: the Run page is being built. */
import type { Route } from '../router.ts';

export default function RunPage(_props: { route: Route }) {
  return <h1>Run</h1>;
}
