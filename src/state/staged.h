// staged.h: an input the controls edit and recompute applies. The views show `applied`;
// the controls write `edit`. The next recompute validates the edit and either applies it or
// puts it back, so an edit that is refused leaves what is shown, and the control, as they
// were (the house's rule: a rejected edit keeps the previous state and says why).
#pragma once
#include <utility>

namespace attnviz {

template <class T> struct Staged {
    T applied{}; // what the views show
    T edit{};    // what the controls asked for; applied by the next recompute

    Staged() = default;
    explicit Staged(T v) : applied(v), edit(std::move(v)) {}

    // The controls ask for v (the next recompute applies it).
    void ask(T v) { edit = std::move(v); }
    // The edit was accepted: it is what the views show now.
    void apply() { applied = edit; }
    // The edit was refused: the control shows what is applied again.
    void put_back() { edit = applied; }
};

} // namespace attnviz
