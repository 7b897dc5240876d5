/**
 * Channels (admin): create a webhook, Slack or email channel, see a webhook's signing secret
 * once, test-send, delete, and read each channel's deliveries with every attempt. Findings
 * reach a channel once it is attached to the Context rot alert.
 */
import { useState } from 'react';
import { ChannelCard } from '../channels/ChannelCard.tsx';
import { ChannelForm } from '../channels/ChannelForm.tsx';
import { SecretOnce } from '../channels/SecretOnce.tsx';
import type { Channel } from '../channels/types.ts';
import { ErrorMessage, Empty, Loading } from '../components/Status.tsx';
import { usePaged } from '../paging.ts';
import { href, type Route } from '../router.ts';
import { LoadMore } from '../components/LoadMore.tsx';

export default function ChannelsPage(_props: { route: Route }) {
  const channels = usePaged<Channel>('/api/channels?limit=200');
  const [revealed, setRevealed] = useState<{ name: string; secret: string }>();
  return (
    <section className="channels-page">
      <h1>Channels</h1>
      <p className="muted">
        Where findings are sent. A channel receives findings once it is attached to the{' '}
        <a href={href(['alert'])}>Context rot alert</a>, with a minimum severity.
      </p>
      {revealed && (
        <SecretOnce
          channelName={revealed.name}
          secret={revealed.secret}
          onDismiss={() => setRevealed(undefined)}
        />
      )}
      <ChannelForm
        onCreated={(created) => {
          if (created.secret) setRevealed({ name: created.name, secret: created.secret });
          channels.reload();
        }}
      />
      <h2>Channels</h2>
      <ErrorMessage error={channels.error} />
      {channels.loading && channels.items.length === 0 && <Loading what="channels" />}
      {!channels.loading && !channels.error && channels.items.length === 0 && (
        <Empty>No channels yet.</Empty>
      )}
      {channels.items.map((channel) => (
        <ChannelCard key={channel.id} channel={channel} onDeleted={channels.reload} />
      ))}
      <LoadMore list={channels} label="More channels" />
    </section>
  );
}
