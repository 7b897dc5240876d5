/** Placeholder: the Conversations page is being built. */
import type { Route } from '../router.ts';

export default function ConversationsPage(_props: { route: Route }) {
  return <h1>Conversations</h1>;
}
