"""The secret guard's words in scripts written without spaces: Chinese, Japanese, Thai, Korean.

Chinese, Japanese and Thai run words together, and Korean attaches particles to them
("비밀번호를"), so :func:`mcp_elicit.forms.secrets.words` cannot find them. Here the
secret words are looked for inside running text, with one regular expression compiled
once (one pass per text, none for ASCII text). The rules are those of the clear phrases
(reasons in ``docs/design/secret-guard.md``):

- A secret word (密码, パスワード, 비밀번호, รหัสผ่าน, ...) counts anywhere in a field's
  name, title or description.
- Unless an *about* word right after it says the field is about the secret (密码长度,
  パスワードの長さ, 비밀번호 길이: spaces and one linking particle 的/の/의 may come
  between), or, in Thai, which puts the head first, right before it (ความยาวรหัสผ่าน,
  ความยาวของรหัสผ่าน). "Hint" (提示, ヒント, 힌트) is not such a word.
- Ordinary words that hold a secret word's characters are listed as *other* words and
  read first: 密码学 (cryptography), 密码子 (codon), 紧密码放 (紧密 + 码放, "tightly
  stacked"), 암호화 (encryption), 암호랑이 (a tigress). At one place the longest word wins,
  and a word that starts earlier wins over one inside it.
- A word that is ambiguous alone (键/キー/키 "key", which is also a keyboard key or
  a person's height; 令牌/トークン "token"; 口令, also a drill command; 암호 alone is kept,
  with its compounds listed as other words, and the words that make it "cipher" when a
  space comes between, 암호 알고리즘, as about words) counts only in a named kind: API キー,
  アクセストークン, 访问令牌.
- A space in a listed word may be left out or repeated ("카드번호", "카드 번호"); Latin
  letters in it match in any case ("API キー", "apiキー").
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["SPACELESS_LETTERS", "spaceless_secret"]

#: The letters of the scripts written without spaces (a character class body):
#: Thai, Hangul jamo, kana, Hangul compatibility jamo, CJK ideographs, Hangul syllables,
#: halfwidth katakana, and the CJK ideographs beyond the BMP.
SPACELESS_LETTERS = (
    "\u0e00-\u0e7f\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff65-\uff9f\U00020000-\U0002fa1f"
)

# Secret words: (word, what it asks for). Simplified and traditional Chinese, Japanese,
# Korean, Thai.
_WORDS: tuple[tuple[str, str], ...] = (
    ("密码", "a password"),
    ("密碼", "a password"),
    ("密钥", "a secret key"),
    ("密鑰", "a secret key"),
    ("金鑰", "a secret key"),
    ("私钥", "a private key"),
    ("私鑰", "a private key"),
    ("访问令牌", "an access token"),
    ("訪問令牌", "an access token"),
    ("刷新令牌", "a refresh token"),
    ("存取權杖", "an access token"),
    ("信用卡", "a payment card number"),
    ("银行卡号", "a payment card number"),
    ("銀行卡號", "a payment card number"),
    ("安全码", "a card security code"),
    ("安全碼", "a card security code"),
    ("パスワード", "a password"),
    ("パスコード", "a passcode"),
    ("パスフレーズ", "a passphrase"),
    ("暗証番号", "a PIN"),
    ("秘密鍵", "a private key"),
    ("暗号鍵", "an encryption key"),
    ("api キー", "an API key"),
    ("アクセスキー", "an access key"),
    ("シークレットキー", "a secret key"),
    ("アクセストークン", "an access token"),
    ("リフレッシュトークン", "a refresh token"),
    ("クレジットカード", "a payment card number"),
    ("カード番号", "a payment card number"),
    ("セキュリティコード", "a card security code"),
    ("비밀번호", "a password"),
    ("암호", "a password"),
    ("api 키", "an API key"),
    ("액세스 토큰", "an access token"),
    ("신용카드", "a payment card number"),
    ("카드 번호", "a payment card number"),
    ("보안 코드", "a card security code"),
    ("รหัสผ่าน", "a password"),
    ("คีย์ api", "an API key"),
    ("บัตรเครดิต", "a payment card number"),
)


def _listed(text: str) -> list[str]:
    return text.split()


# Other words holding a secret word's characters: never a secret.
_OTHER = _listed(
    "密码学 密碼學 密码子 密碼子 密码锁 密碼鎖 密码箱 密碼箱 密码机 密碼機 紧密码放 緊密碼放 "
    "密钥匙 密鑰匙 金鑰匙 安全码头 安全碼頭 "
    "암호화 암호학 암호문 암호랑이"
)

# About words right after a secret word (after spaces and one linking particle).
_ABOUT_AFTER = _listed(
    # Chinese, simplified and traditional.
    "长度 長度 强度 強度 策略 规则 規則 要求 管理 重置 重设 重設 过期 過期 有效期 格式 "
    "类型 類型 名称 名稱 名字 位数 位數 复杂度 複雜度 最小 最大 最短 最长 最長 算法 演算法 "
    "生成器 產生器 尾号 尾號 后四位 後四位 "
    # Japanese.
    "長さ 長 ポリシー ルール 要件 マネージャー 管理 リセット 有効期限 期限 形式 種類 名前 "
    "桁数 文字数 最小 最大 生成 末尾 下4桁 id "
    # Korean.
    "길이 강도 정책 규칙 요구 관리 재설정 만료 형식 유형 종류 이름 자릿수 최소 최대 마지막 "
    "끝자리 생성 "
    # 암호 is also "cipher": a cipher's algorithm, method, system; deciphering; and 암호 화폐
    # as often written with a space.
    "알고리즘 방식 체계 해독 화폐"
)
_LINKS_AFTER = ("的", "の", "의")

# About words right before a secret word, in Thai (the head comes first), "of" between.
_ABOUT_BEFORE = _listed(
    "ความยาว นโยบาย ตัวจัดการ ความแข็งแรง ข้อกำหนด กฎ การรีเซ็ต ชื่อ ประเภท "
    # expiry (date), format, last digits: as 有效期/有効期限/만료, 格式/形式/형식, 尾号/末尾/끝자리
    "วันหมดอายุ การหมดอายุ รูปแบบ เลขท้าย"
)
_LINKS_BEFORE = ("ของ",)


def _key(text: str) -> str:
    return "".join(text.split()).lower()


def _pattern(word: str) -> str:
    """A listed word as a regular expression: a space in it may be left out or repeated."""
    out = r"\s*".join(re.escape(part) for part in word.split())
    if word[0].isascii():
        out = r"(?<![a-z0-9])" + out
    if word[-1].isascii():
        out += r"(?![a-z0-9])"
    return out


def _either(words: list[str]) -> str:
    ordered = sorted(set(words), key=len, reverse=True)
    return "|".join(_pattern(word) for word in ordered)


def _compile() -> re.Pattern[str]:
    # Written so that a run of spaces is split one way only: ``\s*(?:LINK\s*)?``.
    before = rf"(?P<before>(?:{_either(_ABOUT_BEFORE)})\s*(?:(?:{_either(list(_LINKS_BEFORE))})\s*)?)?"
    word = rf"(?P<word>{_either([word for word, _ in _WORDS] + _OTHER)})"
    after = rf"(?P<after>\s*(?:(?:{_either(list(_LINKS_AFTER))})\s*)?(?:{_either(_ABOUT_AFTER)}))?"
    return re.compile(before + word + after, re.IGNORECASE)


_FIND = _compile()
_WHAT = {_key(word): (word, what) for word, what in _WORDS}


def spaceless_secret(text: str) -> tuple[str, str] | None:
    """The first secret word of a script without spaces in ``text``: (word, what), or None."""
    if text.isascii():
        return None
    for found in _FIND.finditer(unicodedata.normalize("NFC", text)):
        hit = _WHAT.get(_key(found["word"]))
        if hit is not None and found["before"] is None and found["after"] is None:
            return hit
    return None
