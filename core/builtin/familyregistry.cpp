#include "builtin/family_elementwise.h"
#include "builtin/family_fma.h"
#include "builtin/family_fmawarp.h"
#include "builtin/family_fmatiled.h"
#include "builtin/family_gemv.h"
#include "builtin/family_mmasync.h"
#include "builtin/family_rowwise.h"
#include "builtin/family_smallm.h"
#include "builtin/family_smallmgemv.h"
#include "builtin/family_wgmma.h"
#include "builtin/family_wmma.h"
#include "builtin/kernelfamily.h"

namespace kev {

FamilyRegistry::FamilyRegistry() {
    m_families.push_back(std::make_unique<FmaTiledFamily>());
    m_families.push_back(std::make_unique<FmaRegBlockFamily>());
    m_families.push_back(std::make_unique<FmaWarpTileFamily>());
    m_families.push_back(std::make_unique<WmmaFamily>());
    m_families.push_back(std::make_unique<MmaSyncFamily>(false));
    m_families.push_back(std::make_unique<MmaSyncFamily>(true));
    m_families.push_back(makeWgmmaTmaFamily());
    m_families.push_back(std::make_unique<SmallMFamily>());
    m_families.push_back(std::make_unique<SmallMGemvFamily>());
    // Memory-bound ops; each supports only its own ops, so GEMM tasks never see them.
    m_families.push_back(std::make_unique<ElementwiseFamily>());
    m_families.push_back(std::make_unique<RowwiseFamily>());
    m_families.push_back(std::make_unique<GemvFamily>());
}

const FamilyRegistry& FamilyRegistry::instance() {
    static const FamilyRegistry registry;
    return registry;
}

QVector<const KernelFamily*> FamilyRegistry::families() const {
    QVector<const KernelFamily*> out;
    for (const auto& family : m_families)
        out.append(family.get());
    return out;
}

const KernelFamily* FamilyRegistry::find(const QString& id) const {
    for (const auto& family : m_families) {
        if (family->id() == id)
            return family.get();
    }
    return nullptr;
}

QVector<const KernelFamily*> FamilyRegistry::supporting(const Task& task,
                                                        const DeviceInfo& device) const {
    QVector<const KernelFamily*> out;
    for (const auto& family : m_families) {
        if (family->supports(task, device))
            out.append(family.get());
    }
    return out;
}

} // namespace kev
