import { Type } from 'typebox'

/**
 * The wire shapes of webhooks and status events. They live apart from the routes so that the SDK
 * (packages/sdk) can take its types from them without loading the server.
 */

/** The body of a webhook delivery, and the `data` of the status stream's `event: status`. */
export const StatusEventSchema = Type.Object(
  {
    txnId: Type.String(),
    extRefId: Type.String({ description: "The caller's reference, or '' when none was given" }),
    txnState: Type.String({ description: 'The state the transaction has entered' }),
    msg: Type.String({ description: "'' or the reason once failed, rejected, expired or in error" }),
    updatedAt: Type.Integer({ description: 'When the state changed, epoch ms' }),
  },
  {
    examples: [
      {
        txnId: 'txn_2kke6dhr97ma42go04h8t6ah7',
        extRefId: 'order-1001',
        txnState: 'completed',
        msg: '',
        updatedAt: 1767225660000,
      },
    ],
  },
)

export const WebhookBody = Type.Object(
  {
    callback: Type.String({ maxLength: 8192, description: 'https URL that receives the events' }),
    secret: Type.String({
      maxLength: 1024,
      description: 'Signing secret, at least 16 characters; write-only',
    }),
  },
  { examples: [{ callback: 'https://shop.example/svcpay/webhook', secret: 'whsec_4f1c9a0b7d2e8f36' }] },
)

export const WebhookUpdateBody = Type.Object(
  {
    callback: Type.Optional(WebhookBody.properties.callback),
    secret: Type.Optional(WebhookBody.properties.secret),
  },
  { examples: [{ secret: 'whsec_rotated_0a9b8c7d6e' }] },
)

export const WebhookOut = Type.Object(
  {
    id: Type.String(),
    callback: Type.String(),
    createdAt: Type.Integer({ description: 'epoch ms' }),
  },
  {
    examples: [
      {
        id: 'wh_5x2k9q0d7m3r8t1v6b4n0c2z8',
        callback: 'https://shop.example/svcpay/webhook',
        createdAt: 1767225600000,
      },
    ],
  },
)

export const WebhookUpdatedOut = Type.Object(
  {
    ...WebhookOut.properties,
    updatedAt: Type.Integer({ description: 'epoch ms' }),
  },
  {
    examples: [
      {
        id: 'wh_5x2k9q0d7m3r8t1v6b4n0c2z8',
        callback: 'https://shop.example/svcpay/webhook',
        createdAt: 1767225600000,
        updatedAt: 1767312000000,
      },
    ],
  },
)

export const DeliveryOut = Type.Object(
  {
    id: Type.String(),
    webhookId: Type.String(),
    eventId: Type.String({ description: 'The X-Svcpay-Event-Id header it carries' }),
    txnId: Type.String(),
    txnState: Type.String(),
    status: Type.String({ description: 'pending, succeeded, failed or cancelled' }),
    attempts: Type.Integer(),
    nextAttemptAt: Type.Union([Type.Integer(), Type.Null()]),
    lastStatus: Type.Union([Type.Integer(), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.Integer(),
    updatedAt: Type.Integer(),
    history: Type.Array(
      Type.Object({
        attempt: Type.Integer(),
        at: Type.Integer(),
        httpStatus: Type.Union([Type.Integer(), Type.Null()]),
        latencyMs: Type.Integer(),
        error: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
  },
  {
    examples: [
      {
        id: '41',
        webhookId: 'wh_5x2k9q0d7m3r8t1v6b4n0c2z8',
        eventId: 'evt_17',
        txnId: 'txn_2kke6dhr97ma42go04h8t6ah7',
        txnState: 'completed',
        status: 'succeeded',
        attempts: 2,
        nextAttemptAt: null,
        lastStatus: 200,
        lastError: null,
        createdAt: 1767225660000,
        updatedAt: 1767225662100,
        history: [
          { attempt: 1, at: 1767225660010, httpStatus: 503, latencyMs: 48, error: null },
          { attempt: 2, at: 1767225662050, httpStatus: 200, latencyMs: 35, error: null },
        ],
      },
    ],
  },
)

export const DeliveryPageOut = Type.Object({
  data: Type.Array(DeliveryOut),
  pagination: Type.Object({ page: Type.Integer(), limit: Type.Integer(), total: Type.Integer() }),
})

/** The rotation of a webhook's secret (issue 32): the new secret, and how long the old one still signs. */
export const WebhookRotateBody = Type.Object(
  {
    secret: WebhookBody.properties.secret,
    overlapS: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 604_800,
        description:
          'Seconds the previous secret keeps signing (a second signature header on each delivery); default 86400, at most 604800 (7 days)',
      }),
    ),
  },
  { examples: [{ secret: 'whsec_rotated_0a9b8c7d6e', overlapS: 86_400 }] },
)

export const WebhookRotatedOut = Type.Object(
  {
    ...WebhookUpdatedOut.properties,
    previousSecretUntil: Type.Integer({
      description: 'epoch ms: until then each delivery also carries the signature under the previous secret',
    }),
  },
  {
    examples: [
      {
        id: 'wh_5x2k9q0d7m3r8t1v6b4n0c2z8',
        callback: 'https://shop.example/svcpay/webhook',
        createdAt: 1767225600000,
        updatedAt: 1767312000000,
        previousSecretUntil: 1767398400000,
      },
    ],
  },
)
