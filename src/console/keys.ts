import { keysStatus } from '../admin/keys.js'
import { markup, type SafeHtml } from '../pages/escape.js'
import type { Lang } from '../pages/i18n.js'
import type { ConsoleDeps } from './deps.js'
import { when } from './format.js'
import type { Localized } from './strings.js'

/**
 * The overview's keys block (issue 32): what each master key still seals, whether an old one can be
 * dropped, and the token signing keys, as `svcpay keys status` says it. Only for roles with
 * `keys.read`; nothing secret is shown (key ids are derived, never the keys).
 */
export const KEYS_TEXT: Localized<{
  title: string
  masterKey: string
  role: string
  sealed: string
  current: string
  previous: string
  unmarked: string
  tokenKeys: string
  signs: string
  verifiesUntil: string
  configured: string
  how: string
}> = {
  en: {
    title: 'Keys',
    masterKey: 'Master key',
    role: 'Role',
    sealed: 'Values it seals',
    current: 'current (MASTER_KEY)',
    previous: 'previous (MASTER_KEY_PREVIOUS)',
    unmarked: 'Values sealed before key ids',
    tokenKeys: 'Token signing keys',
    signs: 'signs',
    verifiesUntil: 'verifies until {t}, then retired',
    configured: 'JWT_SECRET is set: one token key, which does not rotate.',
    how: 'Rotate with `svcpay keys rotate-master` and `svcpay keys rotate-jwt` (docs/operations.md, "Key rotation").',
  },
  vi: {
    title: 'Khóa',
    masterKey: 'Khóa chính',
    role: 'Vai trò',
    sealed: 'Số giá trị được niêm phong',
    current: 'hiện hành (MASTER_KEY)',
    previous: 'trước đây (MASTER_KEY_PREVIOUS)',
    unmarked: 'Giá trị niêm phong trước khi có mã khóa',
    tokenKeys: 'Khóa ký token',
    signs: 'đang ký',
    verifiesUntil: 'còn xác minh đến {t}, sau đó bị loại bỏ',
    configured: 'Đã đặt JWT_SECRET: một khóa token duy nhất, không xoay vòng.',
    how: 'Xoay vòng bằng `svcpay keys rotate-master` và `svcpay keys rotate-jwt` (docs/operations.md, "Key rotation").',
  },
}

export async function keysSection(
  c: Pick<ConsoleDeps, 'db' | 'box' | 'config'>,
  lang: Lang,
): Promise<SafeHtml> {
  const t = KEYS_TEXT[lang]
  const s = await keysStatus(c.db, c.box, {
    now: Date.now(),
    jwtConfigured: c.config.jwtSecret !== undefined,
  })
  const masters = s.master.keys.map(
    (k) =>
      markup`<tr><td><code>${k.keyId}</code></td><td>${k.role === 'current' ? t.current : t.previous}</td><td class="num">${String(k.sealed)}</td></tr>`,
  )
  const tokens = s.jwt.keys.map(
    (k) =>
      markup`<tr><td><code>${k.kid}</code></td><td>${k.current ? t.signs : t.verifiesUntil.replace('{t}', when(k.verifiesUntil))}</td></tr>`,
  )
  const notes = s.notes.map((n) => markup`<li>${n}</li>`)
  return markup`<table data-testid="master-keys"><caption>${t.masterKey}</caption><thead><tr><th>${t.masterKey}</th><th>${t.role}</th><th>${t.sealed}</th></tr></thead><tbody>${masters}</tbody></table>
${s.master.unmarked ? markup`<p>${t.unmarked}: ${String(s.master.unmarked)}</p>` : markup``}
<ul class="notes" data-testid="keys-notes">${notes}</ul>
${s.jwt.configured ? markup`<p>${t.configured}</p>` : markup`<table data-testid="token-keys"><caption>${t.tokenKeys}</caption><tbody>${tokens}</tbody></table>`}
<p class="muted">${t.how}</p>`
}
