/**
 * A real SMTP server on loopback (smtp-server) that parses each message with mailparser.
 * Plain SMTP without STARTTLS; AUTH PLAIN/LOGIN checked against `auth` when given.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** Envelope recipients (RCPT TO). */
  rcptTo: string[];
  mailFrom: string | undefined;
  /** The authenticated user, if any. */
  user: string | undefined;
  parsed: ParsedMail;
}

export interface SmtpSink {
  host: string;
  port: number;
  messages: ReceivedMail[];
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export async function startSmtpSink(auth?: { user: string; password: string }): Promise<SmtpSink> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    authOptional: auth === undefined,
    allowInsecureAuth: true,
    logger: false,
    // smtp-server looks up the client's name by default: a DNS query that would leave the box.
    disableReverseLookup: true,
    onAuth(credentials, _session, callback) {
      if (auth && credentials.username === auth.user && credentials.password === auth.password) {
        callback(null, { user: credentials.username });
      } else {
        callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
      }
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          messages.push({
            rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
            user: typeof session.user === 'string' ? session.user : undefined,
            parsed,
          });
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    messages,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        if (Date.now() > deadline)
          throw new Error(`expected ${count} messages, got ${messages.length}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return messages;
    },
    close() {
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
