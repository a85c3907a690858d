/**
 * The signed transfers the TRON rail keeps so that a request is sent at most once (see
 * docs/payouts.md): in memory until a node accepts one, and in the optional store, which outlives
 * the process. Nothing here talks to the node.
 */
import { RailFailure } from '../../rails/rail.js'
import type { Json } from './trongrid-http.js'

/**
 * A send as the store keeps it. `signed` is the body of `broadcasttransaction` as JSON text (a
 * signed transaction is public once broadcast; it holds no key). Records written before the store
 * kept them have only the hash.
 */
export interface TronSendRecord {
  txHash: string
  signed?: string
  expirationMs?: bigint
}

/** Where a send is recorded; the caller backs it with the database. */
export interface TronSendStore {
  get(requestId: string): Promise<TronSendRecord | undefined>
  byHash(txHash: string): Promise<TronSendRecord | undefined>
  /** Records the signed transaction before it is broadcast; called once per request. */
  put(requestId: string, record: Required<TronSendRecord>): Promise<void>
}

export interface SignedTransfer {
  requestId: string
  txHash: string
  /** The JSON body of `broadcasttransaction`: the node's transaction plus our signature. */
  body: Record<string, unknown>
  expirationMs: bigint
  toHex: string
  amountMinor: bigint
  /** The store holds this hash for the request. */
  recorded: boolean
  /** A node has accepted it (or already had it). */
  accepted: boolean
}

/** Signed transactions waiting for a node to accept them, at most. Each lives about a minute. */
const IN_FLIGHT_MAX = 10_000

/** What one rail holds in memory about its sends. */
export interface SendMemory {
  inFlight: Map<string, SignedTransfer>
  byHash: Map<string, SignedTransfer>
  /** The attempt under way for a request, shared by concurrent calls. */
  running: Map<string, Promise<{ txHash: string }>>
}

export function newSendMemory(): SendMemory {
  return { inFlight: new Map(), byHash: new Map(), running: new Map() }
}

export function remember(memory: SendMemory, entry: SignedTransfer): void {
  // Oldest first: a Map iterates in insertion order, and old entries have long expired.
  while (memory.inFlight.size >= IN_FLIGHT_MAX) {
    const oldest = memory.inFlight.values().next().value
    if (oldest === undefined) break
    forget(memory, oldest)
  }
  memory.inFlight.set(entry.requestId, entry)
  memory.byHash.set(entry.txHash, entry)
}

export function forget(memory: SendMemory, entry: SignedTransfer): void {
  memory.inFlight.delete(entry.requestId)
  memory.byHash.delete(entry.txHash)
}

/** A call to the store; its failure is retryable, whatever it was. */
export async function storeCall<T>(run: () => Promise<T> | undefined): Promise<T | undefined> {
  try {
    return await run()
  } catch (err) {
    throw new RailFailure('store_unavailable', `send record: ${(err as Error).message}`, true)
  }
}

/** The broadcast body a store record holds, or nothing when it holds none that parses. */
export function parseSigned(text: string | undefined): Json | undefined {
  if (text === undefined) return undefined
  try {
    const parsed = JSON.parse(text) as unknown
    return typeof parsed === 'object' && parsed !== null ? (parsed as Json) : undefined
  } catch {
    return undefined
  }
}
