import { markup, type SafeHtml } from '../pages/escape.js'
import type { Lang } from '../pages/i18n.js'
import { day, money } from './format.js'
import type { Localized } from './strings.js'

/**
 * A bar chart of one currency's daily volume, drawn on the server as SVG, with the same figures in
 * a table beside it: the chart is an image with a name and a description for screen readers, the
 * table is what they and anyone who needs exact figures read. Bar heights are the only place where
 * amounts are scaled, and only to pixels (integer arithmetic on the minor units).
 */
export interface DayVolume {
  day: number
  count: number
  minor: bigint
}

const TEXT: Localized<{ title: string; desc: string; date: string; count: string; volume: string }> = {
  en: {
    title: 'Daily completed volume in {ccy}',
    desc: 'Bars per UTC day from {from} to {to}; the highest day is {max}. The table below has every figure.',
    date: 'Day (UTC)',
    count: 'Transactions',
    volume: 'Volume',
  },
  vi: {
    title: 'Khối lượng hoàn tất theo ngày bằng {ccy}',
    desc: 'Cột theo ngày UTC từ {from} đến {to}; ngày cao nhất là {max}. Bảng bên dưới có mọi số liệu.',
    date: 'Ngày (UTC)',
    count: 'Số giao dịch',
    volume: 'Khối lượng',
  },
}

const BAR_W = 22
const GAP = 6
const H = 120
const LEFT = 8
const BOTTOM = 20

export function volumeChart(
  ccy: string,
  days: readonly number[],
  byDay: ReadonlyMap<number, DayVolume>,
  lang: Lang,
): SafeHtml {
  const t = TEXT[lang]
  const max = [...byDay.values()].reduce((m, v) => (v.minor > m ? v.minor : m), 0n)
  const id = `chart-${ccy.toLowerCase().replace(/[^a-z0-9]/g, '')}`
  const fillIn = (s: string) =>
    s
      .replace('{ccy}', ccy)
      .replace('{from}', day(days[0]!))
      .replace('{to}', day(days[days.length - 1]!))
      .replace('{max}', money(max, ccy, lang))
  const width = LEFT * 2 + days.length * (BAR_W + GAP)
  const bars = days.map((d, i) => {
    const v = byDay.get(d)?.minor ?? 0n
    const h = max === 0n ? 0 : Number((v * BigInt(H - 10)) / max)
    const x = LEFT + i * (BAR_W + GAP)
    const label = i % 2 === 0 ? markup`<text x="${x}" y="${H + 14}">${day(d).slice(5)}</text>` : ''
    return markup`<rect class="bar" x="${x}" y="${H - h}" width="${BAR_W}" height="${h}"></rect>${label}`
  })
  const rows = days
    .filter((d) => byDay.has(d))
    .map((d) => {
      const v = byDay.get(d)!
      return markup`<tr><td>${day(d)}</td><td class="num">${v.count}</td><td class="num">${money(v.minor, ccy, lang)}</td></tr>`
    })
  return markup`<figure class="card">
<svg class="chart" role="img" aria-labelledby="${id}-t ${id}-d" viewBox="0 0 ${width} ${H + BOTTOM}" width="${width}" height="${H + BOTTOM}">
<title id="${id}-t">${fillIn(t.title)}</title><desc id="${id}-d">${fillIn(t.desc)}</desc>
<line class="axis" x1="${LEFT}" y1="${H}" x2="${width - LEFT}" y2="${H}"></line>
${bars}
</svg>
<table><caption>${fillIn(t.title)}</caption>
<thead><tr><th scope="col">${t.date}</th><th scope="col" class="num">${t.count}</th><th scope="col" class="num">${t.volume}</th></tr></thead>
<tbody>${rows}</tbody></table>
</figure>`
}
