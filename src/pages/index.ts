/**
 * The hosted invoice page: rendering, headers, assets and the public stream's message shape. The
 * routes that serve them live with the HTTP layer; everything here is pure.
 */
export { escapeHtml } from './escape.js'
export { formatDecimalText, formatTimeLeft } from './format.js'
export {
  PAGE_CONTENT_TYPE,
  PAGE_CSS_CONTENT_TYPE,
  PAGE_SCRIPT_CONTENT_TYPE,
  createNonce,
  pageSecurityHeaders,
} from './headers.js'
export { STRINGS, pickLanguage, type Lang } from './i18n.js'
export { PAGE_SCRIPT } from './page-script.js'
export {
  isFinalPageState,
  pageStatusEvent,
  publicPageStatus,
  type Confirmations,
  type PageState,
  type PageStatus,
} from './page-status.js'
export { qrSvg } from './qr.js'
export {
  MESSAGE_PAGE_STATUS,
  renderInvoicePage,
  renderMessagePage,
  type InvoicePageOptions,
  type InvoicePageView,
  type MessagePageKind,
  type MessagePageOptions,
} from './render.js'
export { PAGE_CSS } from './styles.js'
