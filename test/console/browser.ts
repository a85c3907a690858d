import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { createHarness, type Harness } from '../helpers/harness.js'
import { operatorClient, OPERATOR_PASSWORD, type TestOperator } from '../admin/operator-client.js'
import { fromBase32, totp, totpStep } from '../../src/operators/totp.js'
import type { Role } from '../../src/operators/permissions.js'

/**
 * The operator console in a real Chromium, for tests: the service listening on 127.0.0.1, operators
 * created through the operator API and set up with their TOTP secret, signed in through the
 * console's own form with a code computed from that secret, and the checks every page must pass
 * (axe-core, keyboard use, no script errors or CSP violations). One browser per test file; each
 * operator gets its own context (its own cookies). Test code only.
 */
export const CHROMIUM = '/usr/bin/chromium'
export const HAVE_CHROMIUM = existsSync(CHROMIUM)

const AXE_SOURCE = readFileSync(
  fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)),
  'utf8',
)

export interface ConsoleRig {
  h: Harness
  origin: string
  browser: Browser
  client: ReturnType<typeof operatorClient>
  /** A new active operator of this role (set up through the operator API). */
  createOperator(role: Role): Promise<TestOperator>
  /** A browser context signed in as this operator through the sign-in form. */
  signIn(op: TestOperator, opts?: { locale?: string }): Promise<SignedInPage>
  close(): Promise<void>
}

export interface SignedInPage {
  context: BrowserContext
  page: Page
  /** Script errors and console errors (CSP violations show there). */
  problems: string[]
}

// The last TOTP step used per operator: a code of a used step is refused as a replay.
const lastStep = new Map<string, bigint>()

/** A code of a step no earlier sign-in of this operator used, within the accepted window. */
export async function nextCode(op: TestOperator): Promise<string> {
  for (;;) {
    const now = Date.now()
    for (const d of [0, 1]) {
      const at = now + d * 30_000
      const step = totpStep(at)
      if (step > (lastStep.get(op.id) ?? -1n)) {
        lastStep.set(op.id, step)
        return totp(op.secret, at)
      }
    }
    await new Promise((r) => setTimeout(r, 1_000))
  }
}

export async function startConsoleRig(env: Record<string, string> = {}): Promise<ConsoleRig> {
  const h = await createHarness(env)
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`
  const browser = await chromium.launch({ executablePath: CHROMIUM })
  const client = operatorClient(h.app, h.adminToken)

  /**
   * Set up with the code of the previous step where it is still accepted, so that the next two
   * steps remain for sign-ins without waiting for the clock (a used step cannot be used again).
   */
  async function createOperator(role: Role): Promise<TestOperator> {
    const email = `${role}-${randomBytes(5).toString('hex')}@example.com`
    const created = await client.asSystem('POST', '/admin/operators', { email, role })
    const setupSecret = created.setupSecret as string
    const begun = await client.request('POST', '/admin/setup/begin', { body: { setupSecret } })
    const secret = fromBase32(begun.body.totpSecret)
    for (const back of [30_000, 0]) {
      const at = Date.now() - back
      const finished = await client.request('POST', '/admin/setup/finish', {
        body: { setupSecret, password: OPERATOR_PASSWORD, code: totp(secret, at) },
      })
      if (finished.status === 200) {
        lastStep.set(created.operator.id, totpStep(at))
        return { id: created.operator.id, email, role, secret }
      }
    }
    throw new Error('the operator set-up failed')
  }

  async function signIn(op: TestOperator, opts: { locale?: string } = {}): Promise<SignedInPage> {
    const context = await browser.newContext({
      extraHTTPHeaders: { 'Accept-Language': opts.locale ?? 'en-US,en;q=0.9' },
    })
    const page = await context.newPage()
    const problems: string[] = []
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !/status of 4\d\d/.test(msg.text())) problems.push(msg.text())
    })
    await page.goto(`${origin}/admin/console/sign-in`)
    await page.fill('#email', op.email)
    await page.fill('#password', OPERATOR_PASSWORD)
    await page.fill('#code', await nextCode(op))
    await Promise.all([page.waitForURL(`${origin}/admin/console`), page.click('button[type=submit]')])
    return { context, page, problems }
  }

  return {
    h,
    origin,
    browser,
    client,
    createOperator,
    signIn,
    async close() {
      await browser.close()
      await h.close()
    },
  }
}

export interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: string[]
}

/**
 * axe-core on the page as it is: every rule of WCAG 2.0/2.1 A and AA (labels, names, contrast,
 * landmarks, keyboard and focus order). axe is evaluated through the DevTools protocol, which the
 * page's CSP does not govern, so the page keeps its real headers.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  const present = await page.evaluate(() => typeof (window as any).axe === 'object')
  if (!present) await page.evaluate(AXE_SOURCE)
  return page.evaluate(async () => {
    const result = await (window as any).axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      resultTypes: ['violations'],
    })
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n: any) => n.target.join(' ')),
    }))
  })
}

export interface Focused {
  tag: string
  text: string
  /** The focus ring drawn: outline width in px (0: none). */
  outline: number
}

/**
 * Presses Tab `count` times on a page as loaded (nothing focused yet) and records what gets focus
 * and whether it shows a focus ring: keyboard users must reach every control in a sensible order
 * and see where they are.
 */
export async function tabThrough(page: Page, count: number): Promise<Focused[]> {
  const out: Focused[] = []
  for (let i = 0; i < count; i++) {
    await page.keyboard.press('Tab')
    out.push(
      await page.evaluate(() => {
        const el = document.activeElement as HTMLElement
        const style = getComputedStyle(el)
        return {
          tag: el.tagName.toLowerCase(),
          text: (el.textContent ?? (el as HTMLInputElement).value ?? '').trim().slice(0, 60),
          outline: style.outlineStyle === 'none' ? 0 : parseFloat(style.outlineWidth),
        }
      }),
    )
  }
  return out
}
