import { createWriteStream } from 'node:fs'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import { need, type Command, type Commands } from './args.js'
import { refusal, send } from './client.js'

// Exports for accountants (issue 19): the CSV streams from the server to the file as it comes.
const exportCsv: Command = async ({ verb, flags, out }) => {
  const query = new URLSearchParams({ from: need(flags, 'from'), to: need(flags, 'to') })
  if (typeof flags.account === 'string') query.set('accountId', flags.account)
  const res = await send('GET', `/admin/exports/${verb}.csv?${query}`)
  if (!res.ok || !res.body) {
    const text = await res.text()
    const json: unknown = text.startsWith('{') ? JSON.parse(text) : {}
    throw refusal(res, json as { error?: string; message?: string }, text)
  }
  const file = typeof flags.out === 'string' ? flags.out : undefined
  // The fetch body is the web stream Node implements; its DOM type and Node's differ in name only.
  const body = res.body as unknown as WebReadableStream<Uint8Array>
  await pipeline(Readable.fromWeb(body), file ? createWriteStream(file) : process.stdout, {
    end: file !== undefined,
  })
  if (file) out(`${verb} written to ${file}`)
}

/** CSV exports of transactions and ledger entries, to a file or to stdout. */
export const exportCommands: Commands = {
  'export transactions': exportCsv,
  'export ledger-entries': exportCsv,
}
