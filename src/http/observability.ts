import type { FastifyInstance } from 'fastify'
import client from 'prom-client'
import type { Db } from '../db/db.js'
import { Type } from 'typebox'
import { sql } from '../db/sql.js'

export interface Metrics {
  registry: client.Registry
  httpDuration: client.Histogram<'method' | 'route' | 'status'>
  counter(name: string, help: string, labels?: string[]): client.Counter<string>
  gauge(name: string, help: string, labels?: string[]): client.Gauge<string>
}

export function createMetrics(): Metrics {
  const registry = new client.Registry()
  client.collectDefaultMetrics({ register: registry, prefix: 'svcpay_' })
  const made = new Map<string, client.Metric<string>>()
  return {
    registry,
    httpDuration: new client.Histogram({
      name: 'svcpay_http_request_duration_seconds',
      help: 'HTTP request duration by route',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [registry],
    }),
    counter(name, help, labels = []) {
      if (!made.has(name))
        made.set(name, new client.Counter({ name, help, labelNames: labels, registers: [registry] }))
      return made.get(name) as client.Counter<string>
    },
    gauge(name, help, labels = []) {
      if (!made.has(name))
        made.set(name, new client.Gauge({ name, help, labelNames: labels, registers: [registry] }))
      return made.get(name) as client.Gauge<string>
    },
  }
}

/** Liveness, readiness and Prometheus metrics. */
export function observabilityRoutes(app: FastifyInstance, deps: { db: Db; metrics: Metrics }): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched'
    deps.metrics.httpDuration.observe(
      { method: request.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    )
  })
  // Operational endpoints: not counted by the rate limits and not behind a token.
  const tags = ['Operations']
  const status = (value: string) =>
    Type.Object({ status: Type.String({ description: value }) }, { examples: [{ status: value }] })
  app.get(
    '/healthz',
    { schema: { tags, summary: 'Liveness: the process is up', response: { 200: status('ok') } } },
    async () => ({ status: 'ok' }),
  )
  app.get(
    '/readyz',
    {
      schema: {
        tags,
        summary: 'Readiness: the database answers',
        response: { 200: status('ready'), 503: Type.Ref('ErrorBody') },
      },
    },
    async (_request, reply) => {
      try {
        await deps.db.query(sql`SELECT 1`)
        return { status: 'ready' }
      } catch {
        return reply
          .status(503)
          .send({ error: 'service_unavailable', message: 'The database is unreachable' })
      }
    },
  )
  app.get(
    '/metrics',
    {
      schema: {
        tags,
        summary: 'Prometheus metrics',
        response: {
          200: {
            description: 'The Prometheus text exposition format',
            content: {
              'text/plain': {
                schema: Type.String({
                  examples: [
                    'svcpay_http_request_duration_seconds_count{method="GET",route="/api/v2/rate",status="200"} 42',
                  ],
                }),
              },
            },
          },
        },
      },
    },
    async (_request, reply) => {
      void reply.header('content-type', deps.metrics.registry.contentType)
      // A plain string: the JSON serializer must not quote it.
      return reply.serializer((p: unknown) => p as string).send(await deps.metrics.registry.metrics())
    },
  )
}
