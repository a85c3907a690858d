import { readFile } from 'node:fs/promises'
import { CliError, need, type Commands } from './args.js'
import { call, type DataList } from './client.js'

interface ListRow {
  source: string
  entries: number
  loadedAt: number
  loadedBy: string
}

interface HitRow {
  id: string
  at: number
  accountId: string
  txnId: string
  kind: string
  stage: string
  type: string
  value: string
  source: string
  entry: string
  outcome: string
  reviewedAt: number | null
}

/** The most a list file may be (the API's own bound, src/screening/normalise.ts). */
const LIST_FILE_BYTES_MAX = 16 * 1024 * 1024

/** Screening's deny lists and hits (issue 31): docs/screening.md. */
export const screeningCommands: Commands = {
  async 'screening load'({ rest, flags, print }) {
    const [source, file] = rest
    if (!source || !file)
      throw new CliError(
        'usage: svcpay screening load SOURCE FILE [--type bitcoin|lightning_node|lightning|tron|bank|ethereum]',
      )
    const text = await readFile(file, 'utf8')
    if (Buffer.byteLength(text) > LIST_FILE_BYTES_MAX) throw new CliError(`${file} is larger than 16 MiB`)
    const body = { list: text, ...(flags.type === undefined ? {} : { type: need(flags, 'type') }) }
    const r = await call<{ source: string; before: number | null; after: number }>(
      'PUT',
      `/admin/screening/lists/${encodeURIComponent(source)}`,
      body,
    )
    return print(r, `${r.source}: ${r.after} entries (was ${r.before ?? 'not loaded'})`)
  },
  async 'screening clear'({ rest, print }) {
    if (!rest[0]) throw new CliError('usage: svcpay screening clear SOURCE')
    const r = await call<{ source: string; removed: number }>(
      'DELETE',
      `/admin/screening/lists/${encodeURIComponent(rest[0])}`,
    )
    return print(r, `${r.source}: removed (${r.removed} entries)`)
  },
  async 'screening lists'({ print }) {
    const r = await call<DataList<ListRow>>('GET', '/admin/screening/lists')
    return print(
      r.data,
      r.data
        .map(
          (l) =>
            `${l.source.padEnd(20)}  ${String(l.entries).padStart(8)}  ${new Date(l.loadedAt).toISOString()}  ${l.loadedBy}`,
        )
        .join('\n') || '(none)',
    )
  },
  async 'screening hits'({ flags, print }) {
    const unreviewed = flags.unreviewed === true ? '&unreviewed=true' : ''
    const r = await call<DataList<HitRow>>('GET', `/admin/screening/hits?limit=500${unreviewed}`)
    return print(
      r.data,
      r.data
        .map(
          (h) =>
            `${h.id}  ${new Date(h.at).toISOString()}  ${h.accountId}  ${h.txnId}  ${h.kind}  ${h.stage}  ${h.type}:${h.value}  ${h.source} (${h.entry})  ${h.outcome}${h.reviewedAt === null ? '  UNREVIEWED' : ''}`,
        )
        .join('\n') || '(none)',
    )
  },
  async 'screening review'({ rest, print }) {
    return decideHit('review', rest, print)
  },
  async 'screening release'({ rest, print }) {
    return decideHit('release', rest, print)
  },
}

async function decideHit(
  action: 'review' | 'release',
  rest: string[],
  print: (value: unknown, human: string) => void,
): Promise<void> {
  if (!rest[0]) throw new CliError(`usage: svcpay screening ${action} HIT_ID`)
  const r = await call<HitRow>('POST', `/admin/screening/hits/${encodeURIComponent(rest[0])}/${action}`, {})
  print(r, `hit ${r.id}: ${r.outcome}, reviewed`)
}
