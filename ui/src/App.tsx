/**
 * The console's shell: sign-in when needed, the navigation, and the page for the current hash
 * route. Admin pages (alert, channels, tokens) are listed only for an admin session; the API
 * refuses their actions to any other token anyway.
 */
import type { ComponentType } from 'react';
import { Loading, ErrorMessage } from './components/Status.tsx';
import AlertPage from './pages/Alert.tsx';
import ChannelsPage from './pages/Channels.tsx';
import ConversationsPage from './pages/Conversations.tsx';
import CoveragePage from './pages/Coverage.tsx';
import FindingsPage from './pages/Findings.tsx';
import Login from './pages/Login.tsx';
import RunPage from './pages/Run.tsx';
import TokensPage from './pages/Tokens.tsx';
import TrendsPage from './pages/Trends.tsx';
import { href, useRoute, type Route } from './router.ts';
import { useSession } from './session.tsx';

interface Page {
  /** The first path segment: `#/<section>/…`. */
  section: string;
  title: string;
  component: ComponentType<{ route: Route }>;
  admin?: boolean;
  /** Reached from another page, not listed in the navigation. */
  hidden?: boolean;
}

const PAGES: Page[] = [
  { section: 'findings', title: 'Findings', component: FindingsPage },
  { section: 'conversations', title: 'Conversations', component: ConversationsPage },
  { section: 'runs', title: 'Run', component: RunPage, hidden: true },
  { section: 'trends', title: 'Trends', component: TrendsPage },
  { section: 'coverage', title: 'Coverage', component: CoveragePage },
  { section: 'alert', title: 'Context rot alert', component: AlertPage, admin: true },
  { section: 'channels', title: 'Channels', component: ChannelsPage, admin: true },
  { section: 'tokens', title: 'Tokens', component: TokensPage, admin: true },
];

export function App() {
  const { session, error, signOut } = useSession();
  const route = useRoute();
  if (error) return <ErrorMessage error={error} />;
  if (!session) return <Loading what="the console" />;
  if (!session.open && !session.authenticated) return <Login />;

  const admin = session.scope === 'admin';
  const section = route.path[0] ?? 'findings';
  const page = PAGES.find((candidate) => candidate.section === section);
  return (
    <div className="app">
      <header>
        <a className="brand" href={href(['findings'])}>
          rotscope
        </a>
        <nav>
          {PAGES.filter((p) => !p.hidden && (!p.admin || admin)).map((p) => (
            <a
              key={p.section}
              href={href([p.section])}
              className={p.section === page?.section ? 'active' : undefined}
            >
              {p.title}
            </a>
          ))}
        </nav>
        <span className="who">
          {session.open
            ? 'open (loopback, no tokens)'
            : `${session.scope} · ${session.workspaceId}`}
          {session.authenticated && (
            <button type="button" className="link" onClick={() => void signOut()}>
              Sign out
            </button>
          )}
        </span>
      </header>
      <main>
        {!page ? (
          <p className="error">No page “{section}”.</p>
        ) : page.admin && !admin ? (
          <p className="error" role="alert">
            This page needs an admin token; this session has a {session.scope} token.
          </p>
        ) : (
          <page.component route={route} />
        )}
      </main>
    </div>
  );
}
