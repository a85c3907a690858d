import type { FastifyInstance } from 'fastify'
import type { SsePump } from '../http/sse.js'
import { ApiError } from '../shared/errors.js'
import { NotifierFullError, type Notifier } from './notifier.js'

/** What a family of live streams (the status stream, the payment page's) refuses with. */
export interface LiveStreamLimits {
  /** The most streams one holder (an account, a client address) may keep open. */
  perHolderMax: number
  /** The refusal when a holder already keeps that many open (429). */
  holderFull: string
  /** The refusal when the process serves all the listeners it can (503). */
  processFull: string
}

/**
 * The open live streams of one family: each follows one transaction through the notifier, counts
 * against its holder, and is ended when the server closes. Both server-sent event streams use it,
 * so the order that keeps a change from being missed is written once.
 */
export interface LiveStreams {
  /**
   * Take a slot for `holder`, subscribe to `txnId`, then start the stream with `start` (whose
   * `onEnd` must be called once when it ends for any reason) and pump it once. Throws the
   * contract's error, holding nothing, when the holder or the process is full.
   */
  open(holder: string, txnId: string, start: (onEnd: () => void) => SsePump): Promise<void>
}

export function liveStreams(app: FastifyInstance, notifier: Notifier, limits: LiveStreamLimits): LiveStreams {
  const held = new Map<string, number>()
  const open = new Set<() => void>()
  // preClose, not onClose: Fastify runs onClose only once every connection has ended, and an open
  // stream never ends by itself, so a shutdown would wait for its time-out and exit as a failure.
  app.addHook('preClose', async () => {
    for (const end of [...open]) end()
  })

  const release = (holder: string): void => {
    const left = (held.get(holder) ?? 1) - 1
    if (left <= 0) held.delete(holder)
    else held.set(holder, left)
  }

  return {
    async open(holder, txnId, start) {
      const count = held.get(holder) ?? 0
      if (count >= limits.perHolderMax) throw new ApiError('rate_limit_exceeded', limits.holderFull)
      held.set(holder, count + 1)

      // Subscribe before the stream's first read, so that a change committed in between is not missed.
      let wake = (): void => {}
      let unsubscribe: () => void
      try {
        unsubscribe = await notifier.subscribe(txnId, () => wake())
      } catch (err) {
        release(holder)
        if (err instanceof NotifierFullError) throw new ApiError('service_unavailable', limits.processFull)
        throw err
      }

      // The stream may end before it is returned (a client that already hung up).
      let stream: SsePump | undefined = undefined
      const endThis = (): void => stream?.end()
      stream = start(() => {
        unsubscribe()
        release(holder)
        open.delete(endThis)
      })
      if (!stream.ended) open.add(endThis)
      wake = stream.pump
      stream.pump()
    },
  }
}
