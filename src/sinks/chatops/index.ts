// Public surface of the chat-ops sinks (Slack, Discord, Telegram, PagerDuty, Alertmanager, signed webhook).
export {
  createChatOpsSinks,
  CHATOPS_DEFAULT_POLICY,
  type ChatOpsOptions,
  type ChatOpsSinks,
} from "./chatops.js";
export type { SinkStatus, WorkerPolicy } from "./sink-worker.js";
export { routeAlert } from "./route.js";
export { renderSlack } from "./slack.js";
export { renderDiscord } from "./discord.js";
export { renderTelegram } from "./telegram.js";
export { renderPagerDuty } from "./pagerduty.js";
export { renderAlertmanager } from "./alertmanager.js";
export { renderWebhook, signWebhook, WEBHOOK_HEADERS } from "./webhook.js";
