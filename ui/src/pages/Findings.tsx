/** Placeholder: the Findings page is being built. */
import type { Route } from '../router.ts';

export default function FindingsPage(_props: { route: Route }) {
  return <h1>Findings</h1>;
}
