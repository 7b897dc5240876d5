/** Placeholder: the Tokens page is being built. */
import type { Route } from '../router.ts';

export default function TokensPage(_props: { route: Route }) {
  return <h1>Tokens</h1>;
}
