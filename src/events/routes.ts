import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'

import { adminAuth } from '../operators/admin-auth.js'
import type { AuthService } from '../auth/service.js'
import { bearerAuth, principalOf } from '../auth/hook.js'
import { BEARER, errors } from '../http/schemas.js'
import { ApiError } from '../shared/errors.js'
import {
  DeliveryOut,
  DeliveryPageOut,
  WebhookBody,
  WebhookOut,
  WebhookRotateBody,
  WebhookRotatedOut,
  WebhookUpdateBody,
  WebhookUpdatedOut,
} from './schemas.js'
import { DELIVERY_PAGE_SIZE_MAX } from './delivery-records.js'
import type { WebhooksService } from './service.js'

const TAGS = ['Webhooks']

const DeliveryQuerySchema = Type.Object({
  page: Type.Optional(Type.String({ maxLength: 10 })),
  limit: Type.Optional(Type.String({ maxLength: 10, description: `At most ${DELIVERY_PAGE_SIZE_MAX}` })),
  status: Type.Optional(
    Type.String({ maxLength: 16, description: 'pending, succeeded, failed or cancelled' }),
  ),
})

const WebhookParams = Type.Object({ webhookId: Type.String({ maxLength: 64 }) })
const DeliveryParams = Type.Object({
  webhookId: Type.String({ maxLength: 64 }),
  deliveryId: Type.String({ maxLength: 32 }),
})

/** The webhook API of the spec (POST/GET/PUT/DELETE /api/v2/webhook) and the owner's delivery record. */
export function webhookRoutes(
  fastify: FastifyInstance,
  deps: { auth: AuthService; webhooks: WebhooksService },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const onRequest = bearerAuth(deps.auth)
  const { webhooks } = deps

  app.post(
    '/api/v2/webhook',
    {
      onRequest,
      schema: {
        tags: TAGS,
        summary: 'Register the webhook (replaces any existing one)',
        description:
          'One webhook per account: registering again replaces it with a new id and cancels the old one’s pending deliveries. The callback must be https; private, link-local and metadata addresses are refused.',
        security: BEARER,
        body: WebhookBody,
        response: { 200: WebhookOut, ...errors(400, 401, 413, 415, 429) },
      },
    },
    async (request) => webhooks.create(principalOf(request).accountId, request.body),
  )

  app.get(
    '/api/v2/webhook',
    {
      onRequest,
      schema: {
        tags: TAGS,
        summary: 'Read the webhook',
        description: '`{ data: [] }` when none is registered. The secret is never returned.',
        security: BEARER,
        response: { 200: Type.Object({ data: Type.Array(WebhookOut) }), ...errors(401, 429) },
      },
    },
    async (request) => ({ data: await webhooks.list(principalOf(request).accountId) }),
  )

  app.put(
    '/api/v2/webhook/:webhookId',
    {
      onRequest,
      schema: {
        tags: TAGS,
        summary: 'Change the webhook’s callback or secret',
        description: 'Pending deliveries go to the new callback, signed with the new secret.',
        security: BEARER,
        params: WebhookParams,
        body: WebhookUpdateBody,
        response: { 200: WebhookUpdatedOut, ...errors(400, 401, 404, 413, 415, 429) },
      },
    },
    async (request) => {
      const { webhookId } = request.params
      if (request.body === undefined) throw new ApiError('invalid_request', 'Send callback, secret or both')
      return webhooks.update(principalOf(request).accountId, webhookId, request.body)
    },
  )

  app.post(
    '/api/v2/webhook/:webhookId/rotate-secret',
    {
      onRequest,
      schema: {
        tags: TAGS,
        summary: 'Rotate the webhook’s secret, the old one still signing for an overlap',
        description:
          'The new `secret` signs every delivery from now on (`X-Svcpay-Signature`); for `overlapS` seconds (default one day, at most 7 days) each delivery also carries the signature under the previous secret (`X-Svcpay-Signature-Previous`), so the receiver can switch secrets at any moment of the overlap. See docs/webhooks.md.',
        security: BEARER,
        params: WebhookParams,
        body: WebhookRotateBody,
        response: { 200: WebhookRotatedOut, ...errors(400, 401, 404, 413, 415, 429) },
      },
    },
    async (request) => {
      const { webhookId } = request.params
      return webhooks.rotateSecret(principalOf(request).accountId, webhookId, request.body)
    },
  )

  app.delete(
    '/api/v2/webhook/:webhookId',
    {
      onRequest,
      schema: {
        tags: TAGS,
        summary: 'Remove the webhook',
        description: 'Pending deliveries are cancelled; one already on the wire may still arrive.',
        security: BEARER,
        params: WebhookParams,
        response: { 204: Type.Null({ description: 'Removed' }), ...errors(401, 404, 429) },
      },
    },
    async (request, reply) => {
      const { webhookId } = request.params
      await webhooks.remove(principalOf(request).accountId, webhookId)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/v2/webhook/:webhookId/deliveries',
    {
      onRequest,
      schema: {
        tags: TAGS,
        summary: 'Recent deliveries of the webhook, newest first',
        description: `Each delivery with its recorded attempts (time, HTTP status, latency, error). Defaults page=1, limit=20 (at most ${DELIVERY_PAGE_SIZE_MAX}).`,
        security: BEARER,
        params: WebhookParams,
        querystring: DeliveryQuerySchema,
        response: { 200: DeliveryPageOut, ...errors(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const { webhookId } = request.params
      const accountId = principalOf(request).accountId
      return webhooks.listDeliveries({ accountId, webhookId }, request.query)
    },
  )

  app.post(
    '/api/v2/webhook/:webhookId/deliveries/:deliveryId/redeliver',
    {
      onRequest,
      schema: {
        tags: TAGS,
        summary: 'Send a delivery’s event again',
        description: 'Queues the event as a new delivery to the webhook, with the same X-Svcpay-Event-Id.',
        security: BEARER,
        params: DeliveryParams,
        response: { 200: Type.Object({ data: DeliveryOut }), ...errors(401, 404, 429) },
      },
    },
    async (request) => {
      const { webhookId, deliveryId } = request.params
      const accountId = principalOf(request).accountId
      return { data: await webhooks.redeliver({ accountId, webhookId }, deliveryId) }
    },
  )
}

/** The operator's view of deliveries (`svcpay webhook deliveries|redeliver`), behind ADMIN_TOKEN. */
export function webhookAdminRoutes(
  fastify: FastifyInstance,
  deps: { webhooks: WebhooksService; adminToken: string },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const onRequest = adminAuth(deps.adminToken)
  const schema = { hide: true, tags: ['Admin'] }

  app.get(
    '/admin/webhook/deliveries',
    {
      onRequest,
      schema: {
        ...schema,
        querystring: Type.Object({
          accountId: Type.String({ minLength: 1, maxLength: 64 }),
          ...DeliveryQuerySchema.properties,
        }),
      },
    },
    async (request) => {
      const { accountId, ...query } = request.query
      return deps.webhooks.listDeliveries({ accountId }, query)
    },
  )

  app.post(
    '/admin/webhook/deliveries/:deliveryId/redeliver',
    {
      onRequest,
      schema: { ...schema, params: Type.Object({ deliveryId: Type.String({ maxLength: 32 }) }) },
    },
    async (request) => {
      const { deliveryId } = request.params
      return { data: await deps.webhooks.redeliver({}, deliveryId) }
    },
  )
}
