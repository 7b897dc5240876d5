/**
 * Email channel: one message over SMTP (nodemailer) with a plain-text and an HTML part.
 * The SMTP host is resolved and checked first, and the transport dials the checked address
 * (TLS still verifies the certificate against the configured host name).
 * Formats and sends; the delivery loop decides about retries.
 */
import net from 'node:net';
import nodemailer from 'nodemailer';
import type { EmailSettings } from './config.ts';
import { errorMessage, resolveAllowed } from './outbound.ts';
import {
  detectorTitle,
  headlineNumbers,
  LATE_NOTE,
  splitSummary,
  type ChannelPayload,
  type WindowUnknownPayload,
} from './payload.ts';
import type { SendResult } from './policy.ts';
import type { SendContext } from './webhook.ts';

export interface EmailMessage {
  subject: string;
  text: string;
  html: string;
}

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * A project as a subject names it: its last path segment (`/srv/app/alpha-svc` → `alpha-svc`,
 * `https://github.com/o/alpha.git` → `alpha`), the whole of it in the message's table.
 */
export function projectName(project: string): string {
  const last =
    project
      .replace(/[/\\]+$/, '')
      .split(/[/\\:]/)
      .at(-1) ?? '';
  const name = last.replace(/\.git$/, '');
  return name === '' ? project : name;
}

/** Formats a payload as an email: subject, plain text and HTML. */
export function formatEmail(payload: ChannelPayload): EmailMessage {
  if (payload.type === 'window.unknown') return formatWindowUnknown(payload);
  const finding = payload.data;
  const title = detectorTitle(finding.detector);
  const severity = capitalize(finding.severity);
  const prefix =
    payload.type === 'test' ? '[test] ' : payload.type === 'finding.escalated' ? 'Escalated: ' : '';
  const { happened, advice } = splitSummary(finding.summary);
  const subjectSummary = happened.length > 120 ? `${happened.slice(0, 119)}…` : happened;
  const late = finding.late ? ' (late)' : '';
  const where = finding.project ? ` in ${projectName(finding.project)}` : '';
  const subject =
    `[rotscope] ${prefix}${severity}: ${title}${late}${where} - ${subjectSummary}`.replace(
      /[\r\n]+/g,
      ' ',
    );
  const rows: Array<[string, string]> = [
    ['Severity', severity],
    ['Detector', title],
    ...(finding.project ? ([['Project', finding.project]] as Array<[string, string]>) : []),
    ...(finding.model ? ([['Model', finding.model]] as Array<[string, string]>) : []),
    ...headlineNumbers(finding.details, 10),
    ['Workspace', finding.workspaceName],
    ['Conversation', finding.conversationId],
    ['Trace', finding.traceId],
    ['Found at', finding.createdAt],
    ...(finding.late
      ? ([['Late', LATE_NOTE.replace(/^late: /, '')]] as Array<[string, string]>)
      : []),
  ];
  return messageOf(subject, `${prefix}${severity}: ${title}`, happened, advice, rows, {
    url: finding.url,
    label: 'Open in rotscope',
  });
}

/** A window notice: the model, the calls not judged, the setting, and a link to Coverage. */
function formatWindowUnknown(payload: WindowUnknownPayload): EmailMessage {
  const notice = payload.data;
  const title = `No window known for ${notice.model}`;
  const { happened, advice } = splitSummary(notice.summary);
  const rows: Array<[string, string]> = [
    ['Model', notice.model],
    ['Calls not judged', notice.calls.toLocaleString('en-US')],
    ['Workspace', notice.workspaceName],
    ['Conversation', notice.conversationId],
    ['Noticed at', notice.createdAt],
  ];
  return messageOf(
    `[rotscope] ${title.length > 160 ? `${title.slice(0, 159)}…` : title}`,
    title,
    happened,
    advice,
    rows,
    { url: notice.url, label: 'Open Coverage in rotscope' },
  );
}

/** The subject, text and HTML of a message: a heading, what happened, the advice, a table, a link. */
function messageOf(
  subject: string,
  heading: string,
  happened: string,
  advice: string | null,
  rows: ReadonlyArray<[string, string]>,
  link: { url: string; label: string },
): EmailMessage {
  const text = [
    heading,
    '',
    happened,
    ...(advice === null ? [] : [`What to do: ${advice}`]),
    '',
    ...rows.map(([label, value]) => `${label}: ${value}`),
    '',
    `${link.label}: ${link.url}`,
    '',
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2>${escapeHtml(heading)}</h2>`,
    `<p>${escapeHtml(happened)}</p>`,
    ...(advice === null ? [] : [`<p><strong>What to do:</strong> ${escapeHtml(advice)}</p>`]),
    '<table cellpadding="4">',
    ...rows.map(
      ([label, value]) =>
        `<tr><th align="left">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`,
    ),
    '</table>',
    `<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a></p>`,
    '</body></html>',
  ].join('\n');
  return { subject: subject.replace(/[\r\n]+/g, ' '), text, html };
}

/** Maps a nodemailer error to a send result: SMTP 4xx and connection trouble retry, 5xx do not. */
export function classifySmtpError(error: unknown): SendResult {
  const err = error as { code?: string; responseCode?: number } | undefined;
  const message = errorMessage(error);
  const code = typeof err?.responseCode === 'number' ? err.responseCode : undefined;
  if (code !== undefined) {
    if (code >= 400 && code < 500) return { status: 'retry', code, error: message };
    if (code >= 500) return { status: 'permanent', code, error: message };
  }
  switch (err?.code) {
    case 'EAUTH':
    case 'ENOAUTH':
    case 'EENVELOPE':
    case 'EMESSAGE':
    case 'ETLS':
    case 'EREQUIRETLS':
      return { status: 'permanent', error: message };
    default:
      return { status: 'retry', error: message };
  }
}

/** Sends one email. Never throws for expected failures. */
export async function sendEmail(
  settings: EmailSettings,
  payload: ChannelPayload,
  context: SendContext,
): Promise<SendResult> {
  const resolved = await resolveAllowed(settings.host, context.allowPrivate, context.resolve);
  if (!resolved.ok) {
    return resolved.blocked
      ? { status: 'permanent', error: `refused: ${resolved.error}` }
      : { status: 'retry', error: resolved.error };
  }
  if (context.signal.aborted) return { status: 'retry', error: 'timed out' };
  const transport = nodemailer.createTransport({
    host: resolved.address,
    port: settings.port,
    secure: settings.secure,
    ...(settings.user !== undefined
      ? { auth: { user: settings.user, pass: settings.password ?? '' } }
      : {}),
    // Verify the certificate against the configured name, not the address dialled.
    ...(net.isIP(settings.host) === 0 ? { tls: { servername: settings.host } } : {}),
    // The loop's timeout aborts sooner; these only bound each SMTP phase.
    connectionTimeout: 30_000,
    greetingTimeout: 30_000,
    socketTimeout: 60_000,
  });
  const onAbort = () => transport.close();
  context.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const message = formatEmail(payload);
    const info = (await transport.sendMail({
      from: settings.from,
      to: settings.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
    })) as { response?: string };
    const code = Number(/^\d{3}/.exec(info.response ?? '')?.[0] ?? 250);
    return { status: 'ok', code };
  } catch (error) {
    if (context.signal.aborted) return { status: 'retry', error: 'timed out' };
    return classifySmtpError(error);
  } finally {
    context.signal.removeEventListener('abort', onAbort);
    transport.close();
  }
}
