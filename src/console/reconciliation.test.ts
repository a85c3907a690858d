import { describe, expect, it } from 'vitest'
import type { ReconciliationReport } from '../reconcile/reconcile.js'
import { reportHtml } from './reconciliation.js'

/**
 * The reconciliation report's rail table shows every figure its delta is computed from
 * (src/reconcile/reconcile.ts: delta = (reported - incoming) - (ledger - outgoing)).
 */
const report: ReconciliationReport = {
  ok: false,
  incomplete: true,
  checkedAt: Date.UTC(2026, 0, 2, 3, 4, 5),
  rails: [
    {
      rail: 'lightning',
      ccy: 'BTC',
      adapter: 'lnd',
      status: 'deficit',
      ledger: '1.5',
      outgoing: '0.25',
      reported: '1.2',
      incoming: '0.05',
      delta: '-0.1',
    },
    {
      rail: 'onchain',
      ccy: 'BTC',
      adapter: 'bitcoind',
      status: 'ok',
      ledger: '2',
      outgoing: '0',
      reported: '2',
      incoming: null,
      delta: '0',
    },
    {
      rail: 'tron',
      ccy: 'USDT',
      adapter: 'trongrid',
      status: 'unknown',
      ledger: '10',
      outgoing: '1',
      reported: null,
      incoming: null,
      delta: null,
    },
  ],
  currencies: [],
  orphans: [],
  unmatched: [],
}

const cells = (html: string, testId: string) => {
  const table = new RegExp(`<table data-testid="${testId}"[^>]*>([\\s\\S]*?)</table>`).exec(html)![1]!
  const text = (row: string) =>
    [...row.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim())
  return [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => text(m[1]!))
}

describe('the reconciliation report', () => {
  it('shows the incoming and outgoing figures beside the ledger, the rail and their delta', () => {
    const [head, lightning, onchain, tron] = cells(String(reportHtml(report, 'en')), 'reconciliation-rails')
    expect(head).toEqual([
      'Rail',
      'Adapter',
      'Currency',
      'Ledger',
      'Outgoing',
      'Reported by the rail',
      'Incoming',
      'Delta',
      'Status',
    ])
    expect(lightning!.slice(3, 8)).toEqual(['1.5', '0.25', '1.2', '0.05', '\u22120.1'])
    // A rail that reports nothing on its way in counts none (the delta is computed with zero).
    expect(onchain!.slice(3, 8)).toEqual(['2', '0', '2', '0', '0'])
    expect(tron!.slice(3, 8)).toEqual(['10', '1', 'unknown', 'unknown', 'unknown'])
    const [vi] = cells(String(reportHtml(report, 'vi')), 'reconciliation-rails')
    expect(vi!.slice(3, 8)).toEqual(['Sổ cái', 'Đang chuyển đi', 'Kênh báo cáo', 'Đang về', 'Chênh lệch'])
  })
})
