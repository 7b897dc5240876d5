/** Placeholder: the Channels page is being built. */
import type { Route } from '../router.ts';

export default function ChannelsPage(_props: { route: Route }) {
  return <h1>Channels</h1>;
}
