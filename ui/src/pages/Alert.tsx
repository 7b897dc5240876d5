/** Placeholder: the Alert page is being built. */
import type { Route } from '../router.ts';

export default function AlertPage(_props: { route: Route }) {
  return <h1>Alert</h1>;
}
