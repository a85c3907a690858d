import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../../src/cli/main.js'
import { createHarness, ENGINE, type Harness } from '../helpers/harness.js'
import { seedExportRows } from '../helpers/export-seed.js'
import { csvField, csvNumber } from '../../src/shared/csv.js'
import { operatorClient, type Session } from './operator-client.js'

/**
 * The accountants' exports: transactions and ledger postings of an account or of the whole service
 * over a date range, as CSV read in batches (more rows here than one batch), exact amounts, cells
 * a spreadsheet cannot run, and one audit row per export. The 100,000-row download with the
 * server's memory watched is test/admin/exports-memory.test.ts.
 */
describe(`admin exports (${ENGINE})`, () => {
  let h: Harness
  let client: ReturnType<typeof operatorClient>
  let finance: Session
  const baseMs = Date.UTC(2026, 0, 1)
  const range = `from=2026-01-01&to=2026-01-02`
  const A = 'acc_exportA'
  const B = 'acc_exportB'

  beforeAll(async () => {
    h = await createHarness()
    client = operatorClient(h.app, h.adminToken)
    await seedExportRows(h.c.db, { accountId: A, n: 2_500, baseMs })
    await seedExportRows(h.c.db, { accountId: B, n: 10, baseMs, prefix: 'other' })
    finance = await client.signIn(await client.createOperator('finance'))
  })

  it('starts from rows the ledger accepts: the books balance', async () => {
    await h.expectBooksBalanced()
  })
  afterAll(async () => h?.close())

  const lines = (raw: string) => raw.split('\r\n').slice(0, -1)

  it("exports one account's transactions in a range, exactly, across batches", async () => {
    const res = await client.request('GET', `/admin/exports/transactions.csv?accountId=${A}&${range}`, {
      session: finance,
    })
    expect(res.status, res.raw.slice(0, 300)).toBe(200)
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="svcpay-transactions-${A}-2026-01-01-2026-01-02.csv"`,
    )
    const all = lines(res.raw)
    expect(all[0]).toBe(
      'id,created_at,updated_at,account_id,ext_ref_id,kind,state,src_ccy,src_method,src_amount,src_fee,' +
        'src_network_fee,src_settled,dest_ccy,dest_method,dest_amount,dest_settled,fx_rate,rail_ref,note',
    )
    expect(all).toHaveLength(2_501)
    expect(all[1]).toBe(
      `txn_exp00000000000000000001,2026-01-01T00:00:01.000Z,2026-01-01T00:00:01.000Z,${A},"ref,1",swap,` +
        'completed,BTC,svcpay,0.00123457,0.00000001,0,,USD,svcpay,0.01,0.01,0.0001,,',
    )
    // Row 1000 closes the first batch; its note looks like a formula and is made inert.
    expect(all[1000]).toBe(
      `txn_exp00000000000000001000,2026-01-01T00:16:40.000Z,2026-01-01T00:16:40.000Z,${A},"ref,1000",swap,` +
        "completed,BTC,svcpay,1.23457,0.00000006,0,,USD,svcpay,10,10,0.0001,,'=1+1000",
    )
    expect(all[1001]!.startsWith('txn_exp00000000000000001001,')).toBe(true)
    expect(all[2500]!.startsWith('txn_exp00000000000000002500,2026-01-01T00:41:40.000Z')).toBe(true)
    expect(new Set(all.map((l) => l.split(',')[0])).size).toBe(2_501)
  })

  it('exports the whole service when no account is given, and only the range asked', async () => {
    const res = await client.request('GET', `/admin/exports/transactions.csv?${range}`, { session: finance })
    expect(res.status).toBe(200)
    expect(res.headers['content-disposition']).toContain('svcpay-transactions-all-2026-01-01-2026-01-02.csv')
    const all = lines(res.raw)
    expect(all).toHaveLength(1 + 2_500 + 10)
    expect(all.filter((l) => l.includes(`,${B},`))).toHaveLength(10)
    // Rows of equal time keep a stable order by id: the other account's row 1 sorts before A's.
    expect(all[1]!.startsWith('txn_exp00000000000000000001,')).toBe(true)
    expect(all[2]!.startsWith('txn_other00000000000000000001,')).toBe(true)

    // to is exclusive: the seconds 1 to 10 are rows 1 to 9 of each account.
    const narrow = await client.request(
      'GET',
      `/admin/exports/transactions.csv?from=2026-01-01T00:00:01Z&to=${baseMs + 10_000}`,
      { session: finance },
    )
    expect(lines(narrow.raw)).toHaveLength(1 + 18)
  })

  it('exports ledger postings with signed exact amounts that stay numbers', async () => {
    const res = await client.request('GET', `/admin/exports/ledger-entries.csv?accountId=${A}&${range}`, {
      session: finance,
    })
    expect(res.status).toBe(200)
    const all = lines(res.raw)
    expect(all[0]).toBe(
      'posting_id,entry_id,created_at,txn_id,entry_kind,ledger_account_id,account_id,ledger_account_kind,ccy,amount',
    )
    // One account: its wallet's postings only, one per entry.
    expect(all).toHaveLength(1 + 1_250)
    expect(all[1]).toMatch(
      new RegExp(
        `^\\d+,\\d+,2026-01-01T00:00:01.000Z,txn_exp00000000000000000001,export_test,wal_export_${A},${A},wallet,BTC,0.00001001$`,
      ),
    )
    const service = lines(
      (await client.request('GET', `/admin/exports/ledger-entries.csv?${range}`, { session: finance })).raw,
    )
    expect(service).toHaveLength(1 + 2 * 1_250 + 2 * 5)
    // Both legs of entry 1250 (the last of A's), the system leg negative and not prefixed.
    const legs = service.filter((l) => l.includes(',txn_exp00000000000000001250,'))
    expect(legs.map((l) => l.split(',').slice(5).join(','))).toEqual([
      `wal_export_${A},${A},wallet,BTC,0.01250001`,
      'sys:sandbox-funding:BTC,,system,BTC,-0.01250001',
    ])
    // The postings of each entry sum to zero, in exact decimals.
    const sums = new Map<string, bigint>()
    for (const l of service.slice(1)) {
      const [, entry, , , , , , , , amount] = l.split(',')
      const [whole, frac = ''] = amount!.replace('-', '').split('.')
      const sats = BigInt(whole! + frac.padEnd(8, '0')) * (amount!.startsWith('-') ? -1n : 1n)
      sums.set(entry!, (sums.get(entry!) ?? 0n) + sats)
    }
    expect([...sums.values()].every((s) => s === 0n)).toBe(true)
  })

  it('writes each export to the audit trail, with who, what and which range', async () => {
    const before = await h.c.db.query(
      `SELECT count(*)::int AS n FROM admin_audit WHERE action LIKE 'export.%'`,
    )
    await client.request('GET', `/admin/exports/ledger-entries.csv?accountId=${B}&${range}`, {
      session: finance,
    })
    const { rows } = await h.c.db.query(
      `SELECT * FROM admin_audit WHERE action LIKE 'export.%' ORDER BY id DESC LIMIT 1`,
    )
    const after = await h.c.db.query(
      `SELECT count(*)::int AS n FROM admin_audit WHERE action LIKE 'export.%'`,
    )
    expect(after.rows[0].n).toBe(before.rows[0].n + 1)
    expect(rows[0]).toMatchObject({
      action: 'export.ledger-entries',
      target: `accountId=${B}`,
      after: { from: '2026-01-01T00:00:00.000Z', to: '2026-01-02T00:00:00.000Z', accountId: B },
    })
    expect(rows[0].operator_email).toMatch(/^finance-/)
    expect(rows[0].request_id).toBeTruthy()
  })

  it('refuses a missing or bad range, an unknown account, and roles without exports.read', async () => {
    const get = (url: string, session = finance) => client.request('GET', url, { session })
    expect((await get('/admin/exports/transactions.csv?from=2026-01-01')).status).toBe(400)
    expect((await get('/admin/exports/transactions.csv?to=2026-01-01')).status).toBe(400)
    const bad = await get('/admin/exports/transactions.csv?from=yesterday&to=2026-01-02')
    expect(bad.status).toBe(400)
    expect(bad.body.error).toBe('invalid_request')
    expect((await get('/admin/exports/transactions.csv?from=2026-01-02&to=2026-01-01')).status).toBe(400)
    expect((await get('/admin/exports/ledger-entries.csv?from=2026-01-02&to=2026-01-02')).status).toBe(400)
    const unknown = await get(`/admin/exports/transactions.csv?accountId=acc_nobody&${range}`)
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toBe('not_found')

    const viewer = await client.signIn(await client.createOperator('viewer'))
    const support = await client.signIn(await client.createOperator('support'))
    const compliance = await client.signIn(await client.createOperator('compliance'))
    for (const s of [viewer, support]) {
      const refused = await get(`/admin/exports/transactions.csv?${range}`, s)
      expect(refused.status).toBe(403)
      expect(refused.raw).not.toContain('txn_exp')
    }
    expect((await get(`/admin/exports/ledger-entries.csv?${range}`, compliance)).status).toBe(200)
    expect((await client.request('GET', `/admin/exports/transactions.csv?${range}`)).status).toBe(401)
    const byToken = await client.request('GET', `/admin/exports/transactions.csv?${range}`, {
      token: h.adminToken,
    })
    expect(byToken.status).toBe(200)
  })

  it('refuses impossible calendar dates instead of rolling them into the next month', async () => {
    const get = (url: string) => client.request('GET', url, { session: finance })
    for (const from of [
      '2021-02-30',
      '2021-02-29',
      '2021-04-31',
      '2021-02-30T10:00:00Z',
      '2021-01-01T25:00:00Z',
    ]) {
      const res = await get(`/admin/exports/transactions.csv?from=${from}&to=2021-06-01`)
      expect(res.status, from).toBe(400)
      expect(res.body, from).toMatchObject({ error: 'invalid_request', details: [{ field: 'from' }] })
    }
    const to = await get('/admin/exports/ledger-entries.csv?from=2021-02-01&to=2021-02-30')
    expect(to.status).toBe(400)
    expect(to.body.details).toEqual([{ field: 'to', issue: 'invalid' }])
    // A real 29 February is a date; so is the last day of every month.
    expect((await get('/admin/exports/transactions.csv?from=2024-02-29&to=2024-03-31')).status).toBe(200)
    // The audit trail's filters read times the same way.
    const audit = await client.request('GET', '/admin/audit?from=2021-02-30', { token: h.adminToken })
    expect(audit.status).toBe(400)
  })

  it('answers a HEAD of an export with its headers only, and writes no audit row for it', async () => {
    const count = async () =>
      (await h.c.db.query(`SELECT count(*)::int AS n FROM admin_audit WHERE action LIKE 'export.%'`)).rows[0]
        .n as number
    const before = await count()
    const res = await client.request('HEAD', `/admin/exports/transactions.csv?accountId=${B}&${range}`, {
      session: finance,
    })
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(res.raw).toBe('')
    expect(await count()).toBe(before)
    // A HEAD with a bad range is refused as its GET is.
    const bad = await client.request(
      'HEAD',
      '/admin/exports/transactions.csv?from=2021-02-30&to=2021-03-05',
      {
        session: finance,
      },
    )
    expect(bad.status).toBe(400)
    expect(await count()).toBe(before)
  })

  it('svcpay export writes the CSV to a file over HTTP, and says why it cannot', async () => {
    const address = await h.app.listen({ port: 0, host: '127.0.0.1' })
    const saved = { SVCPAY_URL: process.env.SVCPAY_URL, ADMIN_TOKEN: process.env.ADMIN_TOKEN }
    process.env.SVCPAY_URL = address
    process.env.ADMIN_TOKEN = h.adminToken
    const dir = mkdtempSync(join(tmpdir(), 'svcpay-export-'))
    try {
      const printed: string[] = []
      const file = join(dir, 'postings.csv')
      await run(
        [
          'export',
          'ledger-entries',
          '--from',
          '2026-01-01',
          '--to',
          '2026-01-02',
          '--account',
          B,
          '--out',
          file,
        ],
        (l) => printed.push(l),
      )
      expect(printed).toEqual([`ledger-entries written to ${file}`])
      const written = lines(readFileSync(file, 'utf8'))
      expect(written).toHaveLength(1 + 5)
      expect(written[5]).toMatch(
        new RegExp(`,txn_other00000000000000000005,export_test,wal_export_${B},${B},wallet,BTC,0.00005001$`),
      )
      await expect(
        run(
          ['export', 'transactions', '--from', '2026-01-02', '--to', '2026-01-01', '--out', file],
          () => {},
        ),
      ).rejects.toThrow(/invalid_request: to must be later than from/)
      await expect(run(['export', 'transactions', '--to', '2026-01-01'], () => {})).rejects.toThrow(/--from/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
    }
  })

  it('quotes per RFC 4180 and keeps text from being run as a formula, numbers as numbers', () => {
    expect(csvField('=SUM(A1)')).toBe("'=SUM(A1)")
    expect(csvField('-1.5')).toBe("'-1.5")
    expect(csvField('\tx')).toBe("'\tx")
    expect(csvField('\rx')).toBe('"\'\rx"')
    expect(csvField('+1,2')).toBe(`"'+1,2"`)
    expect(csvField(csvNumber('-1.5'))).toBe('-1.5')
    expect(csvField(csvNumber('12'))).toBe('12')
    // OWASP "CSV Injection": spreadsheets skip leading blanks, read full-width signs as the ASCII
    // ones, and a leading pipe starts a DDE call; each of these is made inert too.
    expect(csvField(' =1+1')).toBe("' =1+1")
    expect(csvField('\u00a0=1+1')).toBe("'\u00a0=1+1")
    expect(csvField('\u3000+1')).toBe("'\u3000+1")
    expect(csvField('\uff1dSUM(A1)')).toBe("'\uff1dSUM(A1)")
    expect(csvField('\uff0b1')).toBe("'\uff0b1")
    expect(csvField('\uff0d1')).toBe("'\uff0d1")
    expect(csvField('\uff20SUM(A1)')).toBe("'\uff20SUM(A1)")
    expect(csvField("|cmd '/c calc'")).toBe("'|cmd '/c calc'")
    expect(csvField('  |x')).toBe("'  |x")
    expect(csvField('\nx')).toBe('"\'\nx"')
    expect(csvField('a = b')).toBe('a = b')
    expect(csvField(' plain')).toBe(' plain')
    expect(() => csvNumber('=1+1')).toThrow(RangeError)
    expect(() => csvNumber('-1e5')).toThrow(RangeError)
  })
})
