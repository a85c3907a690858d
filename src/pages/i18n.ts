/**
 * Every word the hosted invoice page shows, in English and Vietnamese, and the choice between them
 * from the browser's Accept-Language header.
 */

export type Lang = 'en' | 'vi'

export const LANGS: readonly Lang[] = ['en', 'vi']

export const DEFAULT_LANG: Lang = 'en'

/** The strings of one language. `{name}` marks a value filled in by `fill`. */
export interface PageStrings {
  /** Separators for numbers: English writes 12,345.67 and Vietnamese 12.345,67. */
  groupSeparator: string
  decimalSeparator: string
  /** `<title>` of an invoice page; `{merchant}` is the account's display name. */
  pageTitle: string
  paymentRequest: string
  methodLightning: string
  methodOnchain: string
  methodVietQr: string
  amountHeading: string
  sats: string
  /** The unit after an amount of đồng: `500,000 VND` in English, `500.000 ₫` in Vietnamese. */
  vndUnit: string
  fiatAbout: string
  timeLeft: string
  /** Days in a long countdown, singular and plural (Vietnamese has one form). */
  day: string
  days: string
  statusAwaiting: string
  statusSeen: string
  /** `{have}` and `{need}` are confirmation counts. */
  statusSeenConfirmations: string
  statusPaid: string
  /** Paid short or over; `{arrived}` and `{asked}` are amounts with their unit. */
  statusUnderpaid: string
  statusOverpaid: string
  /** Beside the amount asked, once a payment of another amount arrived. */
  arrivedHeading: string
  statusExpired: string
  qrLabelLightning: string
  qrLabelOnchain: string
  qrLabelVietQr: string
  openInWallet: string
  textLabelLightning: string
  textLabelOnchain: string
  copy: string
  copied: string
  copyManual: string
  hintLightning: string
  hintOnchain: string
  hintVietQr: string
  bankLabel: string
  accountNumberLabel: string
  accountNameLabel: string
  transferAmountLabel: string
  memoLabel: string
  /** Under the memo of a bank transfer: the memo is how the transfer is matched to the request. */
  memoNote: string
  noScript: string
  notFoundTitle: string
  notFoundBody: string
  expiredTitle: string
  expiredBody: string
  busyTitle: string
  busyBody: string
  /** The hosted page of a Lightning Address (`/pay/ln/{username}`); `{address}` is user@host. */
  lnAddressTitle: string
  lnAddressMethod: string
  lnAddressQrLnurl: string
  lnAddressQrAddress: string
  lnAddressHint: string
  lnAddressText: string
  lnurlText: string
}

export const STRINGS: Readonly<Record<Lang, PageStrings>> = {
  en: {
    groupSeparator: ',',
    decimalSeparator: '.',
    pageTitle: 'Pay {merchant}',
    paymentRequest: 'Payment request',
    methodLightning: 'Bitcoin over Lightning',
    methodOnchain: 'Bitcoin on-chain',
    methodVietQr: 'Bank transfer in VND (VietQR)',
    amountHeading: 'Amount',
    sats: 'sats',
    vndUnit: 'VND',
    fiatAbout: 'About',
    timeLeft: 'Time left',
    day: 'day',
    days: 'days',
    statusAwaiting: 'Waiting for payment',
    statusSeen: 'Payment detected. Waiting for confirmation…',
    statusSeenConfirmations: 'Payment detected. Confirmations: {have} of {need}',
    statusPaid: 'Paid. Thank you!',
    statusUnderpaid: 'Paid less than asked: {arrived} arrived of the {asked} requested.',
    statusOverpaid: 'Paid more than asked: {arrived} arrived for the {asked} requested.',
    arrivedHeading: 'Received',
    statusExpired: 'This payment request has expired. Do not pay it.',
    qrLabelLightning: 'QR code of the Lightning invoice',
    qrLabelOnchain: 'QR code of the Bitcoin address and amount',
    qrLabelVietQr: 'VietQR code of the bank transfer: bank, account, amount and memo',
    openInWallet: 'Open in wallet',
    textLabelLightning: 'Lightning invoice',
    textLabelOnchain: 'Bitcoin address',
    copy: 'Copy',
    copied: 'Copied',
    copyManual: 'Could not copy. The text is selected: copy it with your keyboard or menu.',
    hintLightning: 'Scan the code with a Lightning wallet, or copy the invoice into it.',
    hintOnchain: 'Send exactly the amount above to this address. Scanning the code fills in both.',
    hintVietQr:
      'Scan the code with your banking app: it fills in the bank, account, amount and memo. Or enter the details below by hand.',
    bankLabel: 'Bank',
    accountNumberLabel: 'Account number',
    accountNameLabel: 'Account holder',
    transferAmountLabel: 'Amount (VND)',
    memoLabel: 'Transfer memo',
    memoNote:
      'Include this exact memo and transfer exactly this amount: the memo is how your payment is recognised. A transfer without it may not be credited to this request.',
    noScript: 'This page does not update by itself without JavaScript. Reload it to see the latest status.',
    notFoundTitle: 'Payment page not found',
    notFoundBody: 'This link is wrong or no longer exists. Please check it with the merchant.',
    expiredTitle: 'Payment request expired',
    expiredBody: 'This payment request has expired. Do not pay it; ask the merchant for a new one.',
    busyTitle: 'Too many requests',
    busyBody: 'Too many requests came from your network. Please wait a minute and reload this page.',
    lnAddressTitle: 'Pay {address}',
    lnAddressMethod: 'Lightning Address: you choose the amount in your wallet',
    lnAddressQrLnurl: 'QR code of the LNURL of this address',
    lnAddressQrAddress: 'QR code of the Lightning Address',
    lnAddressHint:
      'Scan a code with a Lightning wallet and enter the amount, or type the address into the wallet.',
    lnAddressText: 'Lightning Address',
    lnurlText: 'LNURL',
  },
  vi: {
    groupSeparator: '.',
    decimalSeparator: ',',
    pageTitle: 'Thanh toán cho {merchant}',
    paymentRequest: 'Yêu cầu thanh toán',
    methodLightning: 'Bitcoin qua Lightning',
    methodOnchain: 'Bitcoin trên chuỗi (on-chain)',
    methodVietQr: 'Chuyển khoản ngân hàng bằng VND (VietQR)',
    amountHeading: 'Số tiền',
    sats: 'sats',
    vndUnit: '₫',
    fiatAbout: 'Khoảng',
    timeLeft: 'Thời gian còn lại',
    day: 'ngày',
    days: 'ngày',
    statusAwaiting: 'Đang chờ thanh toán',
    statusSeen: 'Đã phát hiện thanh toán. Đang chờ xác nhận…',
    statusSeenConfirmations: 'Đã phát hiện thanh toán. Số xác nhận: {have}/{need}',
    statusPaid: 'Đã thanh toán. Cảm ơn bạn!',
    statusUnderpaid: 'Thanh toán thiếu: đã nhận {arrived}, ít hơn số tiền yêu cầu {asked}.',
    statusOverpaid: 'Thanh toán thừa: đã nhận {arrived}, nhiều hơn số tiền yêu cầu {asked}.',
    arrivedHeading: 'Đã nhận',
    statusExpired: 'Yêu cầu thanh toán này đã hết hạn. Vui lòng không thanh toán.',
    qrLabelLightning: 'Mã QR của hóa đơn Lightning',
    qrLabelOnchain: 'Mã QR của địa chỉ Bitcoin và số tiền',
    qrLabelVietQr: 'Mã VietQR của giao dịch chuyển khoản: ngân hàng, số tài khoản, số tiền và nội dung',
    openInWallet: 'Mở trong ví',
    textLabelLightning: 'Hóa đơn Lightning',
    textLabelOnchain: 'Địa chỉ Bitcoin',
    copy: 'Sao chép',
    copied: 'Đã sao chép',
    copyManual: 'Không sao chép được. Nội dung đã được chọn: hãy sao chép bằng bàn phím hoặc menu.',
    hintLightning: 'Quét mã bằng ví Lightning, hoặc sao chép hóa đơn vào ví.',
    hintOnchain: 'Gửi đúng số tiền ở trên đến địa chỉ này. Quét mã sẽ điền sẵn cả hai.',
    hintVietQr:
      'Quét mã bằng ứng dụng ngân hàng: mã sẽ điền sẵn ngân hàng, số tài khoản, số tiền và nội dung. Hoặc nhập thông tin bên dưới.',
    bankLabel: 'Ngân hàng',
    accountNumberLabel: 'Số tài khoản',
    accountNameLabel: 'Chủ tài khoản',
    transferAmountLabel: 'Số tiền (VND)',
    memoLabel: 'Nội dung chuyển khoản',
    memoNote:
      'Ghi chính xác nội dung này và chuyển đúng số tiền trên: nội dung là cách hệ thống nhận ra thanh toán của bạn. Giao dịch thiếu nội dung này có thể không được ghi nhận cho yêu cầu này.',
    noScript:
      'Khi JavaScript bị tắt, trang này không tự cập nhật. Hãy tải lại trang để xem trạng thái mới nhất.',
    notFoundTitle: 'Không tìm thấy trang thanh toán',
    notFoundBody: 'Liên kết này không đúng hoặc không còn tồn tại. Vui lòng kiểm tra lại với người bán.',
    expiredTitle: 'Yêu cầu thanh toán đã hết hạn',
    expiredBody:
      'Yêu cầu thanh toán này đã hết hạn. Vui lòng không thanh toán; hãy yêu cầu người bán tạo yêu cầu mới.',
    busyTitle: 'Quá nhiều yêu cầu',
    busyBody: 'Có quá nhiều yêu cầu từ mạng của bạn. Vui lòng đợi một phút rồi tải lại trang này.',
    lnAddressTitle: 'Thanh toán cho {address}',
    lnAddressMethod: 'Địa chỉ Lightning: bạn chọn số tiền trong ví của mình',
    lnAddressQrLnurl: 'Mã QR của LNURL của địa chỉ này',
    lnAddressQrAddress: 'Mã QR của địa chỉ Lightning',
    lnAddressHint: 'Quét một mã bằng ví Lightning rồi nhập số tiền, hoặc nhập địa chỉ vào ví.',
    lnAddressText: 'Địa chỉ Lightning',
    lnurlText: 'LNURL',
  },
}

/** Fill `{name}` placeholders; a placeholder without a value is left as it is. */
export function fill(template: string, values: Readonly<Record<string, string | number>>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    Object.hasOwn(values, name) ? String(values[name]) : whole,
  )
}

/** Headers longer than this are not parsed: no real browser sends one, and it bounds the work. */
const ACCEPT_LANGUAGE_MAX_CHARS = 4096
const ACCEPT_LANGUAGE_ENTRIES_MAX = 64
const QVALUE_RE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/

/**
 * Choose the page language from an Accept-Language header (RFC 9110 section 12.5.4). The
 * supported language with the highest q-value wins, the earlier one on a tie; `q=0` means "not
 * this one"; a malformed entry is skipped. Without a supported language the page is in English.
 */
export function pickLanguage(acceptLanguageHeader: string | undefined): Lang {
  if (!acceptLanguageHeader || acceptLanguageHeader.length > ACCEPT_LANGUAGE_MAX_CHARS) return DEFAULT_LANG
  let best: Lang | null = null
  let bestQ = 0
  const entries = acceptLanguageHeader.split(',').slice(0, ACCEPT_LANGUAGE_ENTRIES_MAX)
  for (const entry of entries) {
    const [rangeText = '', ...params] = entry.split(';')
    const range = rangeText.trim().toLowerCase()
    let q = 1
    let valid = true
    for (const param of params) {
      const eq = param.indexOf('=')
      if (eq < 0) continue
      if (param.slice(0, eq).trim().toLowerCase() !== 'q') continue
      const qText = param.slice(eq + 1).trim()
      if (!QVALUE_RE.test(qText)) valid = false
      else q = Number(qText)
    }
    if (!valid || q <= 0) continue
    const primary = range.split('-')[0]
    const lang = LANGS.find((l) => l === primary)
    if (lang && q > bestQ) {
      best = lang
      bestQ = q
    }
  }
  return best ?? DEFAULT_LANG
}
