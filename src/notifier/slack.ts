/**
 * Slack channel: POSTs a Block Kit message to an incoming-webhook URL
 * (https://api.slack.com/messaging/webhooks). The message has a `text` fallback (used in
 * notifications, naming the project) and blocks: a section with severity, detector and summary,
 * a section of fields (project, model and the headline numbers), a context line (workspace, conversation, time)
 * and an actions block with a button linking to the finding in the console.
 * Formats and sends; the delivery loop decides about retries.
 */
import type { SlackSettings } from './config.ts';
import { postJson } from './outbound.ts';
import {
  detectorTitle,
  headlineNumbers,
  LATE_NOTE,
  splitSummary,
  type ChannelPayload,
  type WindowUnknownPayload,
} from './payload.ts';
import { classifyHttp, type SendResult } from './policy.ts';
import type { SendContext } from './webhook.ts';

type TextObject = { type: 'mrkdwn' | 'plain_text'; text: string; emoji?: boolean };

export type SlackBlock =
  | { type: 'section'; text?: TextObject; fields?: TextObject[] }
  | { type: 'context'; elements: TextObject[] }
  | {
      type: 'actions';
      elements: Array<{
        type: 'button';
        text: TextObject;
        url: string;
        action_id: string;
        style?: 'primary' | 'danger';
      }>;
    };

export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}

const SEVERITY_EMOJI: Record<string, string> = {
  info: ':information_source:',
  warning: ':warning:',
  critical: ':rotating_light:',
};

/** Escapes the three characters Slack's mrkdwn reserves. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The summary, its advice on a line of its own. */
function summaryMrkdwn(summary: string): string {
  const { happened, advice } = splitSummary(summary);
  return (
    escapeMrkdwn(happened) + (advice === null ? '' : `\n*What to do:* ${escapeMrkdwn(advice)}`)
  );
}

/** Formats a payload as a Block Kit message (limits: 3000 chars per section, 10 fields). */
export function formatSlack(payload: ChannelPayload): SlackMessage {
  if (payload.type === 'window.unknown') return formatWindowUnknown(payload);
  const finding = payload.data;
  const title = detectorTitle(finding.detector);
  const severity = capitalize(finding.severity);
  const prefix =
    payload.type === 'test' ? '[test] ' : payload.type === 'finding.escalated' ? 'Escalated: ' : '';
  const late = finding.late ? ` (${LATE_NOTE})` : '';
  const heading = `${SEVERITY_EMOJI[finding.severity] ?? ''} *${prefix}${severity} · ${escapeMrkdwn(title)}*${late}`;
  const fields: TextObject[] = [
    { type: 'mrkdwn', text: `*Severity*\n${severity}` },
    { type: 'mrkdwn', text: `*Detector*\n${escapeMrkdwn(title)}` },
  ];
  if (finding.project)
    fields.push({ type: 'mrkdwn', text: `*Project*\n${escapeMrkdwn(clip(finding.project, 300))}` });
  if (finding.model)
    fields.push({ type: 'mrkdwn', text: `*Model*\n${escapeMrkdwn(clip(finding.model, 200))}` });
  for (const [label, value] of headlineNumbers(finding.details, 10 - fields.length)) {
    fields.push({
      type: 'mrkdwn',
      text: clip(`*${escapeMrkdwn(label)}*\n${escapeMrkdwn(value)}`, 2000),
    });
  }
  return {
    text: clip(
      `${prefix}[${finding.severity}] ${title}${late}${finding.project ? ` in ${finding.project}` : ''}: ${finding.summary}`,
      3000,
    ),
    blocks: [
      {
        type: 'section',
        text: { type: 'mrkdwn', text: clip(`${heading}\n${summaryMrkdwn(finding.summary)}`, 3000) },
      },
      { type: 'section', fields },
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: clip(
              `Workspace *${escapeMrkdwn(finding.workspaceName)}* · conversation \`${escapeMrkdwn(
                finding.conversationId,
              )}\` · ${finding.createdAt}`,
              3000,
            ),
          },
        ],
      },
      {
        type: 'actions',
        elements: [
          {
            type: 'button',
            text: { type: 'plain_text', text: 'Open in rotscope', emoji: false },
            url: clip(finding.url, 3000),
            action_id: 'open_finding',
            ...(finding.severity === 'critical'
              ? { style: 'danger' as const }
              : { style: 'primary' as const }),
          },
        ],
      },
    ],
  };
}

/** A window notice: the model, the calls not judged, the setting, and a link to Coverage. */
function formatWindowUnknown(payload: WindowUnknownPayload): SlackMessage {
  const notice = payload.data;
  const model = clip(notice.model, 200);
  return {
    text: clip(notice.summary, 3000),
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: clip(
            `:warning: *No window known for ${escapeMrkdwn(model)}*\n${summaryMrkdwn(notice.summary)}`,
            3000,
          ),
        },
      },
      {
        type: 'section',
        fields: [
          { type: 'mrkdwn', text: `*Model*\n${escapeMrkdwn(model)}` },
          { type: 'mrkdwn', text: `*Calls not judged*\n${notice.calls.toLocaleString('en-US')}` },
        ],
      },
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: clip(
              `Workspace *${escapeMrkdwn(notice.workspaceName)}* · conversation \`${escapeMrkdwn(
                notice.conversationId,
              )}\` · ${notice.createdAt}`,
              3000,
            ),
          },
        ],
      },
      {
        type: 'actions',
        elements: [
          {
            type: 'button',
            text: { type: 'plain_text', text: 'Open Coverage', emoji: false },
            url: clip(notice.url, 3000),
            action_id: 'open_coverage',
            style: 'primary',
          },
        ],
      },
    ],
  };
}

/** Sends one Slack message. Never throws for expected failures. */
export async function sendSlack(
  settings: SlackSettings,
  payload: ChannelPayload,
  context: SendContext,
): Promise<SendResult> {
  const outcome = await postJson(settings.webhookUrl, {
    body: JSON.stringify(formatSlack(payload)),
    signal: context.signal,
    allowPrivate: context.allowPrivate,
    ...(context.resolve ? { resolve: context.resolve } : {}),
  });
  return classifyHttp(outcome, context.now().getTime());
}
