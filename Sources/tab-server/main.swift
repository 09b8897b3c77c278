import TabStore
print("tab-server")
