import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../db/db.js'
import { paramsOf } from '../http/request-fields.js'
import { markup, raw } from '../pages/escape.js'
import { createFlashStore, operatorCredential } from './flash.js'
import { CONSOLE_BASE } from './nav.js'
import { consolePage, contextOf, sendPage } from './page.js'
import type { Localized } from './strings.js'

/**
 * The pages a console form's 303 See Other leads to (Post/Redirect/Get, src/console/flash.ts): a
 * form's result, shown once, and the page a sign-out ends on.
 */
const TEXT: Localized<{ goneTitle: string; gone: string; overview: string }> = {
  en: {
    goneTitle: 'Already shown',
    gone: 'This result was shown once and is not kept (or it has expired). Nothing was done again: reloading a result page never repeats the form.',
    overview: 'Go to the overview',
  },
  vi: {
    goneTitle: 'Đã hiển thị',
    gone: 'Kết quả này chỉ hiển thị một lần và không được lưu lại (hoặc đã hết hạn). Không có thao tác nào được thực hiện lại: tải lại trang kết quả không bao giờ gửi lại biểu mẫu.',
    overview: 'Đến trang tổng quan',
  },
}

export function installFlashes(app: FastifyInstance, db: Db): void {
  app.decorate('consoleFlashes', createFlashStore(db))

  // The page a form's 303 leads to: its result, once. `section` is chosen per result below.
  consolePage(app, `${CONSOLE_BASE}/done/:flashId`, undefined, async (ctx) => {
    const { flashId } = paramsOf(ctx.request, Type.Object({ flashId: Type.String() }))
    // A HEAD (a prefetch, a link checker) would take the result and show it to nobody: it leaves
    // the result for the GET.
    if (ctx.request.method === 'HEAD') return { title: TEXT[ctx.lang].goneTitle, body: markup`` }
    const flash = await app.consoleFlashes.take(operatorCredential(ctx.request), flashId)
    if (flash)
      return {
        title: flash.title,
        body: raw(flash.body),
        ...(flash.section ? { section: flash.section } : {}),
      }
    const t = TEXT[ctx.lang]
    return {
      status: 410,
      title: t.goneTitle,
      body: markup`<p class="notice warn" role="status">${t.gone}</p><p><a href="${CONSOLE_BASE}">${t.overview}</a></p>`,
    }
  })

  app.get(`${CONSOLE_BASE}/signed-out`, { schema: { hide: true } }, async (request, reply) => {
    const { lang, t, query } = contextOf(request, reply)
    return sendPage(reply, {
      lang,
      title: t.signedOutTitle,
      body: markup`<p class="notice good" role="status">${query.everywhere === '1' ? t.signedOutEverywhereBody : t.signedOutBody}</p><p><a href="${CONSOLE_BASE}/sign-in">${t.signInAgain}</a></p>`,
    })
  })
}
