/**
 * The web console (ui/): the single-page app built by `npm run build` into dist/ui, served at
 * `/` on the API's port; the session routes that keep a pasted token in an HttpOnly,
 * SameSite=Strict cookie; CSRF protection for every state-changing API request a browser
 * makes; and the security headers (a CSP without inline scripts) on every answer.
 *
 * CSRF: a request is "from a browser" when it carries the session cookie, an `Origin` or a
 * `Sec-Fetch-Site` header (browsers send one of them on every POST/PUT/PATCH/DELETE). Such a
 * request must carry `x-csrf-token` matching the secret cookie @fastify/csrf-protection set
 * when `GET /api/session` handed the token out. Scripts and the CLI (a bearer header, no
 * Origin) are not asked for one: a forged cross-site request cannot set their header.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyHelmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Scope } from '../model/tokens.ts';
import { SESSION_COOKIE, type AuthLookup } from './auth.ts';
import { isOtlpPath } from './routed-path.ts';
import { errorSchema } from './schemas.ts';
import { withInputRules } from './validation.ts';
import { refuse } from './errors.ts';

/** Where the built console is: dist/ui beside dist/api (compiled) or beside src/ (from source). */
function consoleRoot(): string | undefined {
  const candidates = ['../ui/', '../../dist/ui/'].map((relative) =>
    fileURLToPath(new URL(relative, import.meta.url)),
  );
  return candidates.find((dir) => existsSync(`${dir}index.html`));
}

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const CSRF_COOKIE = 'rotscope_csrf';

function isFromBrowser(request: FastifyRequest): boolean {
  return (
    request.cookies?.[SESSION_COOKIE] !== undefined ||
    request.headers.origin !== undefined ||
    request.headers['sec-fetch-site'] !== undefined
  );
}

const sessionSchema = z.object({
  /** Bound to loopback with no token yet: everything is reachable without signing in. */
  open: z.boolean(),
  /** A session cookie with a live token came with the request. */
  authenticated: z.boolean(),
  scope: z.enum(['read', 'ingest', 'admin']).nullable(),
  workspaceId: z.string().nullable(),
  /** Send as `x-csrf-token` on every POST/PUT/PATCH/DELETE. */
  csrfToken: z.string(),
});

interface SessionDeps {
  auth: AuthLookup;
  cookieOptions: { httpOnly: true; sameSite: 'strict'; secure: boolean; path: string };
}

/** `GET|POST|DELETE /api/session`: who the console is signed in as, sign in, sign out. */
const sessionRoutes = withInputRules<SessionDeps>(async (app, { auth, cookieOptions }) => {
  async function describeSession(reply: FastifyReply, token?: string) {
    const found = token ? await auth.lookup(token) : undefined;
    const open = await auth.isOpen();
    const scope: Scope | null = found?.scope ?? (open ? 'admin' : null);
    return {
      open,
      authenticated: found !== undefined,
      scope,
      workspaceId: found?.workspaceId ?? (open ? 'default' : null),
      csrfToken: reply.generateCsrf(),
    };
  }

  app.get(
    '/api/session',
    { schema: { hide: true, response: { 200: sessionSchema } } },
    async (request, reply) => describeSession(reply, request.cookies[SESSION_COOKIE]),
  );
  app.post(
    '/api/session',
    {
      schema: {
        hide: true,
        body: z.strictObject({ token: z.string().min(1).max(512) }),
        response: { 200: sessionSchema, 401: errorSchema, 403: errorSchema },
      },
    },
    async (request, reply) => {
      const { token } = request.body;
      const found = await auth.lookup(token);
      if (!found) return refuse(reply, 'unauthorized', 'unknown or revoked token');
      // An ingest token can send data but read none: signed in, every page would say "needs read".
      if (found.scope === 'ingest')
        return refuse(
          reply,
          'forbidden',
          'this is an ingest token: it sends data but cannot read it. Sign in with a read or admin token ' +
            `(rotscope token create --workspace ${found.workspaceId} --scope read)`,
        );
      reply.setCookie(SESSION_COOKIE, token, cookieOptions);
      return describeSession(reply, token);
    },
  );
  app.delete(
    '/api/session',
    { schema: { hide: true, response: { 200: sessionSchema } } },
    async (_request, reply) => {
      reply.clearCookie(SESSION_COOKIE, cookieOptions);
      return describeSession(reply);
    },
  );
});

export interface ConsoleOptions {
  auth: AuthLookup;
  /** Set `Secure` on the cookies (the console is reached over https). */
  secureCookies: boolean;
}

export async function registerConsole(
  app: FastifyInstance,
  options: ConsoleOptions,
): Promise<void> {
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        fontSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    // Served over plain http on loopback too: no HSTS, no upgrade of the console's own assets.
    strictTransportSecurity: false,
    crossOriginEmbedderPolicy: false,
  });

  const cookieOptions = {
    httpOnly: true as const,
    sameSite: 'strict' as const,
    secure: options.secureCookies,
    path: '/api',
  };
  await app.register(fastifyCsrf, {
    cookieKey: CSRF_COOKIE,
    cookieOpts: cookieOptions,
    getToken: (request) => {
      const header = request.headers['x-csrf-token'];
      return typeof header === 'string' ? header : undefined;
    },
  });
  // Judged by the routed path (src/api/routed-path.ts): `/%61pi/...` is `/api/...` to the router.
  // Every state-changing browser request is checked but OTLP's, which take no cookie.
  app.addHook('onRequest', (request, reply, done) => {
    if (UNSAFE_METHODS.has(request.method) && !isOtlpPath(request) && isFromBrowser(request)) {
      return app.csrfProtection(request, reply, done);
    }
    done();
  });

  await app.register(sessionRoutes, { auth: options.auth, cookieOptions });

  const root = consoleRoot();
  if (root) {
    await app.register(fastifyStatic, { root, prefix: '/', index: ['index.html'], wildcard: true });
  } else {
    app.get('/', async (_request, reply) =>
      reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The console is not built: run `npm run build` (npm ci runs it).\n'),
    );
  }
}
