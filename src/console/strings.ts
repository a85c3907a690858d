import { pickLanguage, type Lang } from '../pages/i18n.js'
import type { ConsoleQuery } from './page.js'

/**
 * The console's words in English and Vietnamese. The shell's strings live here; each page keeps
 * its own in its file as a `Localized<…>` value, so that pages added later do not touch this one.
 */
export type Localized<T> = Readonly<Record<Lang, T>>

export function localize<T>(texts: Localized<T>, lang: Lang): T {
  return texts[lang]
}

/** The language of a console request: `?lang=` when given, else the browser's Accept-Language. */
export function consoleLanguage(query: ConsoleQuery, acceptLanguage: string | undefined): Lang {
  const asked = query.lang
  if (asked === 'en' || asked === 'vi') return asked
  return pickLanguage(acceptLanguage)
}

export interface ShellStrings {
  console: string
  skipToContent: string
  mainNavigation: string
  signedInAs: string
  role: string
  signOut: string
  signOutEverywhere: string
  navOverview: string
  navAccounts: string
  navTransactions: string
  navApprovals: string
  navReconciliation: string
  navAudit: string
  navOperators: string
  navExports: string
  navScreening: string
  signInTitle: string
  signInIntro: string
  email: string
  password: string
  totpCode: string
  totpHint: string
  signIn: string
  signInFailed: string
  signInExpired: string
  sessionEnded: string
  signedOutTitle: string
  signedOutBody: string
  signedOutEverywhereBody: string
  signInAgain: string
  errorTitle: string
  forbiddenBody: string
  notFoundBody: string
  invalidBody: string
  conflictBody: string
  failedBody: string
  back: string
  language: string
}

export const SHELL_STRINGS: Localized<ShellStrings> = {
  en: {
    console: 'svcpay console',
    skipToContent: 'Skip to content',
    mainNavigation: 'Main',
    signedInAs: 'Signed in as',
    role: 'Role',
    signOut: 'Sign out',
    signOutEverywhere: 'Sign out everywhere',
    navOverview: 'Overview',
    navAccounts: 'Accounts',
    navTransactions: 'Transactions',
    navApprovals: 'Approvals',
    navReconciliation: 'Reconciliation',
    navAudit: 'Audit',
    navOperators: 'Operators',
    navExports: 'Exports',
    navScreening: 'Screening',
    signInTitle: 'Sign in',
    signInIntro: 'Operators sign in with their email, password and the code of their authenticator app.',
    email: 'Email',
    password: 'Password',
    totpCode: 'Authenticator code',
    totpHint: 'Six digits, from your authenticator app.',
    signIn: 'Sign in',
    signInFailed: 'Email, password or code not accepted. Check them and try again.',
    signInExpired: 'This form has expired. Please try again.',
    sessionEnded: 'Your session has ended. Please sign in again.',
    signedOutTitle: 'Signed out',
    signedOutBody: 'You are signed out of this browser.',
    signedOutEverywhereBody: 'All your sessions have ended, in every browser.',
    signInAgain: 'Sign in again',
    errorTitle: 'Something went wrong',
    forbiddenBody: 'Your role does not allow this.',
    notFoundBody: 'Nothing was found here.',
    invalidBody: 'The request was not accepted.',
    conflictBody: 'This cannot be done in the current state.',
    failedBody: 'The request failed. Please try again later.',
    back: 'Back',
    language: 'Language',
  },
  vi: {
    console: 'Bảng điều khiển svcpay',
    skipToContent: 'Chuyển đến nội dung',
    mainNavigation: 'Chính',
    signedInAs: 'Đăng nhập với',
    role: 'Vai trò',
    signOut: 'Đăng xuất',
    signOutEverywhere: 'Đăng xuất khỏi mọi nơi',
    navOverview: 'Tổng quan',
    navAccounts: 'Tài khoản',
    navTransactions: 'Giao dịch',
    navApprovals: 'Phê duyệt',
    navReconciliation: 'Đối soát',
    navAudit: 'Nhật ký kiểm toán',
    navOperators: 'Người vận hành',
    navExports: 'Xuất dữ liệu',
    navScreening: 'Sàng lọc',
    signInTitle: 'Đăng nhập',
    signInIntro: 'Người vận hành đăng nhập bằng email, mật khẩu và mã của ứng dụng xác thực.',
    email: 'Email',
    password: 'Mật khẩu',
    totpCode: 'Mã xác thực',
    totpHint: 'Sáu chữ số, từ ứng dụng xác thực của bạn.',
    signIn: 'Đăng nhập',
    signInFailed: 'Email, mật khẩu hoặc mã không được chấp nhận. Hãy kiểm tra và thử lại.',
    signInExpired: 'Biểu mẫu này đã hết hạn. Vui lòng thử lại.',
    sessionEnded: 'Phiên của bạn đã kết thúc. Vui lòng đăng nhập lại.',
    signedOutTitle: 'Đã đăng xuất',
    signedOutBody: 'Bạn đã đăng xuất khỏi trình duyệt này.',
    signedOutEverywhereBody: 'Mọi phiên của bạn đã kết thúc, trên mọi trình duyệt.',
    signInAgain: 'Đăng nhập lại',
    errorTitle: 'Đã xảy ra lỗi',
    forbiddenBody: 'Vai trò của bạn không được phép làm việc này.',
    notFoundBody: 'Không tìm thấy gì ở đây.',
    invalidBody: 'Yêu cầu không được chấp nhận.',
    conflictBody: 'Không thể làm việc này ở trạng thái hiện tại.',
    failedBody: 'Yêu cầu thất bại. Vui lòng thử lại sau.',
    back: 'Quay lại',
    language: 'Ngôn ngữ',
  },
}
