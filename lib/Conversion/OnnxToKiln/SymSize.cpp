//===- SymSize.cpp - polynomials over run-time sizes ----------*- C++ -*-===//
//
// The integer polynomials over atoms that SymbolicSizes.h sizes values
// with: sums, products, exact division and their text for messages.
//
//===----------------------------------------------------------------------===//
#include "SymbolicSizes.h"

using namespace mlir;
using namespace mlir::kiln;

/// Sizes in real graphs have a few terms; a hostile chain of shape
/// arithmetic must not grow a polynomial without end (it becomes unknown).
static constexpr size_t kMaxTerms = 64;

SymSize SymSize::constant(int64_t c) {
  SymSize s;
  if (c)
    s.terms[{}] = c;
  return s;
}

SymSize SymSize::atom(unsigned id) {
  SymSize s;
  s.terms[{id}] = 1;
  return s;
}

std::optional<int64_t> SymSize::getConstant() const {
  if (terms.empty())
    return 0;
  if (terms.size() == 1 && terms.begin()->first.empty())
    return terms.begin()->second;
  return std::nullopt;
}

std::optional<unsigned> SymSize::getAtom() const {
  if (terms.size() == 1 && terms.begin()->first.size() == 1 &&
      terms.begin()->second == 1)
    return terms.begin()->first.front();
  return std::nullopt;
}

bool SymSize::accumulate(const Monomial &m, int64_t c) {
  int64_t &slot = terms[m];
  if (__builtin_add_overflow(slot, c, &slot))
    return false;
  if (!slot)
    terms.erase(m);
  return terms.size() <= kMaxTerms;
}

std::optional<SymSize> SymSize::add(const SymSize &a, const SymSize &b) {
  SymSize r = a;
  for (const auto &[m, c] : b.terms)
    if (!r.accumulate(m, c))
      return std::nullopt;
  return r;
}

std::optional<SymSize> SymSize::neg(const SymSize &a) {
  SymSize r;
  for (const auto &[m, c] : a.terms) {
    if (c == INT64_MIN)
      return std::nullopt;
    r.terms[m] = -c;
  }
  return r;
}

std::optional<SymSize> SymSize::mul(const SymSize &a, const SymSize &b) {
  SymSize r;
  for (const auto &[ma, ca] : a.terms)
    for (const auto &[mb, cb] : b.terms) {
      Monomial m = ma;
      m.append(mb.begin(), mb.end());
      llvm::sort(m);
      int64_t c;
      if (m.size() > 8 || __builtin_mul_overflow(ca, cb, &c) ||
          !r.accumulate(m, c))
        return std::nullopt;
    }
  return r;
}

/// `ma` without `mb`'s atoms (multisets), when it has them all.
static std::optional<SymSize::Monomial>
withoutAtoms(const SymSize::Monomial &ma, const SymSize::Monomial &mb) {
  SymSize::Monomial rest = ma;
  for (unsigned id : mb) {
    auto it = llvm::find(rest, id);
    if (it == rest.end())
      return std::nullopt;
    rest.erase(it);
  }
  return rest;
}

/// A graded order of monomials (degree, then the sorted atom ids
/// lexicographically), compatible with multiplication: the leading terms
/// of an exact polynomial division.
static bool monomialLess(const SymSize::Monomial &a,
                         const SymSize::Monomial &b) {
  if (a.size() != b.size())
    return a.size() < b.size();
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

std::optional<SymSize> SymSize::divExact(const SymSize &a, const SymSize &b) {
  if (b.terms.size() > 1) {
    // Division by leading terms; exact when the remainder reaches zero
    // (the blocks of `b * nW` divided by `nW = (h' / 7) * (w' / 7)`).
    auto lead = [](const SymSize &p) {
      return *std::max_element(p.terms.begin(), p.terms.end(),
                               [](const auto &x, const auto &y) {
                                 return monomialLess(x.first, y.first);
                               });
    };
    auto [mb, cb] = lead(b);
    SymSize rem = a, q;
    for (int step = 0; step < 64; ++step) {
      if (rem.terms.empty())
        return q;
      auto [ma, ca] = lead(rem);
      if (ca % cb)
        return std::nullopt;
      std::optional<Monomial> rest = withoutAtoms(ma, mb);
      if (!rest)
        return std::nullopt;
      SymSize t;
      t.terms[*rest] = ca / cb;
      std::optional<SymSize> tb = mul(t, b), minus;
      if (!tb || !(minus = neg(*tb)) || !q.accumulate(*rest, ca / cb))
        return std::nullopt;
      std::optional<SymSize> next = add(rem, *minus);
      if (!next)
        return std::nullopt;
      rem = *next;
    }
    return std::nullopt;
  }
  if (b.terms.empty())
    return std::nullopt;
  const auto &[mb, cb] = *b.terms.begin();
  if (cb == 0)
    return std::nullopt;
  SymSize r;
  for (const auto &[ma, ca] : a.terms) {
    if (ca % cb)
      return std::nullopt;
    std::optional<Monomial> rest = withoutAtoms(ma, mb);
    if (!rest)
      return std::nullopt;
    r.terms[*rest] = ca / cb;
  }
  return r;
}

std::string SymSize::str(ArrayRef<std::string> atomNames) const {
  if (terms.empty())
    return "0";
  std::string out;
  for (const auto &[m, c] : terms) {
    std::string term;
    if (m.empty() || (c != 1 && c != -1))
      term = std::to_string(c < 0 && !out.empty() ? -c : c);
    else if (c == -1 && out.empty())
      term = "-";
    for (unsigned id : m)
      term += (term.empty() || term == "-" ? "" : " * ") + atomNames[id];
    if (out.empty())
      out = term;
    else
      out += (c < 0 ? " - " : " + ") + term;
  }
  return out;
}
